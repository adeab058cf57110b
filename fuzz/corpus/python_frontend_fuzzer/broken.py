def broken(:
    x = )
