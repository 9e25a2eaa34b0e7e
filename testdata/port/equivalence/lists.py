l = [3, 1, 2]
l.append(9)
print(len(l), l[0], l[-1], l[1:3], l)
print(2 in l, 7 not in l, [] == [])
t = 0
for v in l:
    t += v
print(t)
for i in range(2, 5):
    print(i * 2)
print([1] + [2, 3], [0] * 3, l[1:] + l[:1])
