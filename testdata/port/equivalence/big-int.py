# hand: an integer past 2^53
# Python's integers have no limit; Lua's numbers are doubles.
print(2 ** 53 + 1)
print(9007199254740993)
print(10 ** 20, 2 ** 60)
