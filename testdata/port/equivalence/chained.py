for x in [0, 2, 5]:
    if 1 < x < 3:
        print(x, "inside")
    else:
        print(x, "outside")
print(1 < 2 < 3 < 4, 3 > 2 > 5)
