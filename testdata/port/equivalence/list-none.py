# hand: a list holding None
for v in [1, None, 2]:
    print(v)
