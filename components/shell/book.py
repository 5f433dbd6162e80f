"""The book's running example, chapter 1's complaint letter: defined once, read by every tab
that starts from it (Pipelines, the Start route)."""

LETTER = (
    "Dear Amazon, two weeks ago I ordered a Megatron action figure from your online store in "
    "Germany. Yesterday the parcel finally reached me in Detroit, and when I opened it I found an "
    "Optimus Prime figure instead! I collect Decepticons, so Optimus Prime is of no use to me. "
    "Please send me the Megatron figure I paid for and tell me how to return the wrong one. "
    "My order number is 302-118. I look forward to your reply. Sincerely, Bumblebee"
)
