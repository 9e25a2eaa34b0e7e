# Integers up to 2^53 are exact in both, and print as integers.
print(2 ** 53, -2 ** 53, 9007199254740992 - 1, 2 ** 52 + 1, 0x1F, 0o17, 0b101)
print(-7 // 2, 7 // -2, -7 % 3, 7 % -3, 2 ** 0)
