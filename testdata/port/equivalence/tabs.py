# hand: indentation mixes tabs and spaces
if True:
	x = 1
        print(x)
