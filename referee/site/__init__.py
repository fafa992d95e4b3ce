"""The web site of a league or a season (``referee serve``): what a visitor, an author and the organiser may read.

One module an idea: ``uploads`` (an author's archive, checked and unpacked
off the event loop, landed whole as their submission folder).
"""
