print(1, 2)
print(0.1 + 0.2)
x = 7 / 2
print(x)
