# What a review found differing: float printing, loop variables after the
# loop, iterating a string, round to digits, % of a list, lists in lists,
# repr of strings, alternate octal and length modifiers.
t = 1700000000.25
print(t, 0.00001, 1e16, 123456789.5, -0.5, 1e-05 * 3)
for i in range(3):
    pass
print(i)
for c in "hé日":
    print(c)
print(c)
print(round(2.675, 2), round(0.125, 2), round(1234.5, -2))
print("%s" % [1, 2])
print([1, 2] in [[1, 2]], [3] in [[1, 2]])
print(["it's", 'say "x"', "a\nb", "tab\there"])
print("%#o|%#x|%ld|%5.2f%%" % (8, 255, 42, 3.14159))
