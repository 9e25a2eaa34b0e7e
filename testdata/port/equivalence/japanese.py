s = "日本語のテキスト"
print(len(s), s[0], s[-1], s[1:3], s[:2], s[5:])
print("\u3000 こんにちは \u3000".strip() + "|")
print("  x  ".lstrip() + "|", "  x  ".rstrip() + "|")
print("本" in s, "英" in s)
