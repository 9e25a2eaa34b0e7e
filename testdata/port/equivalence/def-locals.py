# Names assigned in a function are its own, in every block of it.
total = 10
y = "global y"
def f(x):
    global total
    if x:
        y = 1
    else:
        y = 2
    total = total + y
    return y
print(f(True), f(False), total, y)
