# A call that returns nothing gives None, which print shows.
def greet(name):
    text = "hello " + name
print(greet("x"))
print("a", greet("y"))
