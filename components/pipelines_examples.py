"""Example texts for the Pipelines tab: the complaint letter first (plain strings, no imports)."""

LETTER = (
    "Dear Amazon, two weeks ago I ordered a Megatron action figure from your online store in "
    "Germany. Yesterday the parcel finally reached me in Detroit, and when I opened it I found an "
    "Optimus Prime figure instead! I collect Decepticons, so Optimus Prime is of no use to me. "
    "Please send me the Megatron figure I paid for and tell me how to return the wrong one. "
    "My order number is 302-118. I look forward to your reply. Sincerely, Bumblebee"
)
LETTER_SUMMARY = "Bumblebee ordered a Megatron figure but received Optimus Prime and wants an exchange."
LETTER_GERMAN_START = "Sehr geehrtes Amazon-Team, vor zwei Wochen habe ich in Ihrem Online-Shop in Deutschland eine Megatron-Actionfigur bestellt."
LETTER_START = LETTER.split(". Yesterday")[0] + "."
PRAISE = "Thank you for the quick delivery! The Bumblebee figure is perfect and my son loves it."
QUESTION = "Hello, do you also sell the Starscream figure in the limited edition, and does it ship to Canada?"
REPLY_PROMPT = LETTER + "\n\nCustomer service response:\nDear Bumblebee, I am sorry to hear that"
