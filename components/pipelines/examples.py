"""Example texts for the Pipelines tab: the complaint letter first (plain strings)."""

from components.shell.book import LETTER

LETTER_SUMMARY = "Bumblebee ordered a Megatron figure but received Optimus Prime and wants an exchange."
LETTER_GERMAN_START = "Sehr geehrtes Amazon-Team, vor zwei Wochen habe ich in Ihrem Online-Shop in Deutschland eine Megatron-Actionfigur bestellt."
LETTER_START = LETTER.split(". Yesterday")[0] + "."
PRAISE = "Thank you for the quick delivery! The Bumblebee figure is perfect and my son loves it."
QUESTION = "Hello, do you also sell the Starscream figure in the limited edition, and does it ship to Canada?"
REPLY_PROMPT = LETTER + "\n\nCustomer service response:\nDear Bumblebee, I am sorry to hear that"

# Defaults the offline fallback (a 135M chat model) handles; the letter stays one example among others.
NER_EXAMPLE = "Tim Cook presented the new iPhone at Apple's headquarters in Cupertino."
NER_EXAMPLE_2 = "Marie Curie was born in Warsaw and later worked at the University of Paris."
QA_CONTEXT = "The Eiffel Tower is in Paris. It was built in 1889 by the company of Gustave Eiffel."
QA_QUESTIONS = ["When was the Eiffel Tower built?", "Where is the Eiffel Tower?"]
# The check: the answer is a span of the text ("1,230 km"), or there is none in it.
RHINE = ("The Rhine is one of the major rivers of Europe. It rises in the Swiss Alps and flows 1,230 km to the "
         "North Sea, passing through Basel, Strasbourg and Cologne. Barges carry coal, grain and containers "
         "along it, and its largest port is Duisburg in Germany.")
RHINE_QUESTIONS = ["How long is the Rhine?", "Who was the first person to swim the Rhine?"]
RHINE_LABELS = ["The Rhine: how long is it?", "The Rhine: who swam it first? (the text does not say)"]
SUMMARY_EXAMPLE = (
    "Bumblebee ordered a Megatron action figure from an online store. When the parcel arrived, it contained an "
    "Optimus Prime figure instead. Bumblebee wrote to the store to ask for the Megatron figure and for help "
    "returning the wrong one."
)
SUMMARY_REFERENCE = "Bumblebee ordered a Megatron figure, received Optimus Prime, and asked the store for an exchange."
EIFFEL = (
    "The Eiffel Tower is a wrought-iron tower in Paris, France. It was built by Gustave Eiffel's company for "
    "the 1889 World's Fair. At first many artists criticised its design, but it became a global symbol of "
    "France. Today it is one of the most visited monuments in the world, with about seven million visitors a year."
)
EIFFEL_SUMMARY = "The Eiffel Tower in Paris, built for the 1889 World's Fair, became a symbol of France."
MASK_EXAMPLES = [  # (label, text)
    ("Paris is the [MASK] of France.", "Paris is the [MASK] of France."),
    ("Megatron action [MASK]", "I ordered a Megatron action [MASK] from your online store."),
    ("The cat sat on the <mask>.", "The cat sat on the <mask>."),
]
