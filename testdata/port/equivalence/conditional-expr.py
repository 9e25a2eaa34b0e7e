# hand: a conditional expression
n = 3
print("many" if n > 2 else "few")
