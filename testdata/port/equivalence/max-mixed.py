# hand: printing a min() or max() of ints and floats
# Python's max(1.0, 2) is the int 2, max(1, 2.0) the float 2.0.
print(max(1.0, 2), max(3, 2.0))
