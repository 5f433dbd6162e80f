"""A news text and its reference summary, shared by the summary-support checks of several tiers."""

from __future__ import annotations





NEWS = ("The city council of Lyon voted on Tuesday to close the old river port, which was built in 1851. "
        "The site will be turned into housing for about 3,000 people by 2030. "
        "Dozens of fishermen protested outside the town hall during the vote. "
        "They say fewer than twenty barges a month still use the port, but it is their only shelter in winter. "
        "The council promised to build a new mooring two kilometres downstream.")


REFERENCE = "Lyon will close its 1851 river port to build housing for 3,000 people; fishermen protested."
