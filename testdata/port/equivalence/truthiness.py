# Python's 0, "", [] and None are false; Lua's 0 and "" are true.
for v in [0, "", [], 1, "x", [0], 0.0]:
    if v:
        print("true")
    else:
        print("false")
    if not v:
        print("not")
n = 0
while n < 3 and not "":
    n += 1
print(n)
v = None
if v:
    print("None is true")
else:
    print("None is false")
