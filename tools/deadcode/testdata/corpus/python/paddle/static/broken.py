"""A file that does not parse: reported as a problem, the rest of the report still produced."""


def broken(:
    return 1
