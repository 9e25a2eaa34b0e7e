a = "\x41\u3042\101\t|"
print(a)
print(r"\d+\n")
print("it's", 'say "hi"')
b = "x"
c = "y"
print(b + c, "ab" * 3, "=" * 0 + "|")
print("%d items" % 3.7, "%s and %s" % ("a", None), "%05.1f|%-5s|%x" % (3.14159, "ab", 255))
print("%s" % True, "%r" % "q", "100%%")
