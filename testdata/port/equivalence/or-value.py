# hand: "or" on values that are not True or False
name = ""
print(name or "guest")
