print(int(-3.7), int(3.7), int("42"), int(" 7 "), float("2.5"), int(True))
print(7 / 2, str(6 / 2), 7 // 2, -7 // 2, 7 % 3, -7 % 3, 2 ** 10)
print(round(2.5), round(3.5), round(-2.5), round(3.14159, 2))
print(str(1.5), str(0.1 + 0.2), str(True), str(None), str(12))
