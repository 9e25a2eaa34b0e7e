word = "hello"
first = word[0]
print(first, word[len(word) - 1], word.upper(), word.lower())
