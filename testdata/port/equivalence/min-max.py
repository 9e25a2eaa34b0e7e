print(max(1, 2), max(1.5, 2.5), min(-1, 4), min(2.0, 0.5), max(1, 2, 3))
# Of ints and floats, the same number whichever it is: only printing it differs.
v = max(min(7.5 / 5, 1), -1)
print(v == 1, v + 1 == 2)
