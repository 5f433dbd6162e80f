"""HELD_OUT_3: a third held-out QA set for the `local` profile's span QA, written 2026-11-24.

Written by a writer who had not seen the QA method (its settings, prompt or no-answer rule) and
measured once; it is not used to choose anything. Twelve new short news, science, history,
business, sport and everyday contexts (topics, names and numbers not reused from qa_sets.py),
three questions each. Answers are names, numbers with their units, dates, places and short
phrases, each an exact substring of its context; some questions reuse the text's words, some
paraphrase it. None = the text does not say: mostly questions whose answer type appears in the
text but for a different thing (another price, date, number), a few about a detail the text
never mentions, and a few that swap a detail (the runner-up's prize when only the winner's is
given). Each case: (context, question, expected answer or None).
"""

from __future__ import annotations

_ALETSCH = ("The Aletsch Glacier in the Swiss canton of Valais is the largest glacier in the Alps. It is about "
            "20 kilometres long and covers roughly 80 square kilometres. Since 1870 it has retreated by more "
            "than 3 kilometres, and scientists at ETH Zurich expect most of it to vanish by 2100. Every summer, "
            "hikers cross its ice on guided tours that start from the village of Fiesch.")
_ROOFTOP = ("Rosa Delgado keeps 12 beehives on the roof of a hotel in Valencia. Each hive holds up to 50,000 "
            "bees in summer, and together they produce about 240 kilograms of honey a year. The hotel serves "
            "the honey at its breakfast buffet and sells the rest in small jars at reception for 11 euros each. "
            "Delgado began beekeeping in 2015 after taking an evening course run by her uncle.")
_CHESS = ("Indian chess player Priya Raman, 17, won the Reykjavik Open on Wednesday with 8 points from 9 games. "
          "She finished half a point ahead of Norway's Henrik Solberg, whose only defeat came against her in the "
          "fifth round. The tournament, held every spring in the Harpa concert hall, drew 260 players from 41 "
          "countries. Raman will next play in the World Junior Championship in Mexico City in August.")
_ERIE = ("The Erie Canal opened in October 1825 and linked the Hudson River at Albany with Lake Erie at Buffalo. "
         "It was 363 miles long and was dug largely by hand by Irish immigrants and local farmers. Governor "
         "DeWitt Clinton had pushed hard for the project, which critics mocked as Clinton's Ditch. The canal "
         "cut the cost of shipping goods from Buffalo to New York City by about 95 percent.")
_KELLUKE = ("The Tallinn start-up Kelluke said on Monday that it had raised 27 million dollars to expand its app, "
            "which lets farmers rent out unused machinery to each other. The funding round was led by the Dutch "
            "investor Brightfield Capital. Kelluke was founded in 2019 by two cousins, Mart and Liis Kask, and "
            "now has 85 employees. Its app is used by about 60,000 farmers in the Baltic states and Poland.")
_COMET = ("Comet Hale-Bopp was discovered in July 1995 by two American amateur astronomers, Alan Hale and Thomas "
          "Bopp, working independently. It became one of the brightest comets of the twentieth century and "
          "could be seen without a telescope for about a year and a half. Its nucleus is thought to be about 60 "
          "kilometres across, several times larger than that of Halley's Comet. Hale-Bopp will not return to "
          "the inner solar system for more than 2,000 years.")
_POOL = ("The public swimming pool in Dunmore reopened on Saturday after a two-year renovation that cost 3.4 "
         "million pounds. It now has a 25-metre lap pool, a learners' pool and solar panels on the roof. Centre "
         "manager Owen Pryce said that more than 2,500 people came on the first day, twice the number he had "
         "expected. Opening hours have been extended to 9 p.m. on weekdays.")
_BADMINTON = ("Japan's Emi Tanaka lost the final of the All-Asia Badminton Championships in Kuala Lumpur on "
              "Sunday to China's Wang Li, 21-17, 19-21, 21-15. The match lasted 74 minutes. Tanaka, the world "
              "number three, had beaten the defending champion in the semi-final. Wang Li, 22, collected prize "
              "money of 38,000 dollars and will climb to fourth place in the world rankings.")
_TERRACOTTA = ("The Terracotta Army was discovered in March 1974 by farmers digging a well near the city of "
               "Xi'an in China. The clay figures were buried with Qin Shi Huang, the first emperor of a united "
               "China, who died in 210 BC. Archaeologists estimate that the pits hold about 8,000 soldiers, along "
               "with horses and chariots. No two of the faces are exactly alike, and many figures were once "
               "brightly painted.")
_RECALL = ("The Canadian toy maker Maplewood Toys recalled 52,000 wooden train sets on Friday after reports that "
           "small wheels could come loose and choke young children. The sets were sold in Canada and the United "
           "States between March and October last year for about 45 dollars. No injuries have been reported. "
           "Customers can return the toys to any store for a full refund or call the company's helpline.")
_PHONEBOX = ("Neighbours in the village of Ashcombe have turned an old red telephone box into the smallest "
             "lending library in the county. It holds about 120 books, and anyone may take one as long as they "
             "leave another in its place. The idea came from retired postman Derek Hollis, who repairs the "
             "shelves and sweeps the floor every week. The parish council bought the box for 1 pound in 2012.")
_TERN = ("The Arctic tern makes the longest migration of any animal, flying from its breeding grounds in the "
         "Arctic to Antarctica and back every year. A tracking study found that one bird covered about 90,000 "
         "kilometres in a single year. The terns weigh only about 100 grams, yet they can live for more than 30 "
         "years. They feed mainly on small fish, which they catch by diving into the sea.")

HELD_OUT_3 = [
    (_ALETSCH, "How long is the Aletsch Glacier?", "about 20 kilometres"),
    (_ALETSCH, "Scientists from which institution expect the glacier to mostly disappear?", "ETH Zurich"),
    (_ALETSCH, "How thick is the ice at the glacier's deepest point?", None),
    (_ROOFTOP, "How many hives does Rosa Delgado keep?", "12"),
    (_ROOFTOP, "Where does the hotel sell the honey it does not serve?", "at reception"),
    (_ROOFTOP, "How much does a night at the hotel cost?", None),
    (_CHESS, "How old is the winner of the Reykjavik Open?", "17"),
    (_CHESS, "In which city will Priya Raman play next?", "Mexico City"),
    (_CHESS, "Who finished third in the tournament?", None),
    (_ERIE, "How long was the Erie Canal?", "363 miles"),
    (_ERIE, "What did critics call the project?", "Clinton's Ditch"),
    (_ERIE, "When did DeWitt Clinton become governor?", None),
    (_KELLUKE, "Who led the funding round?", "Brightfield Capital"),
    (_KELLUKE, "How many people work for Kelluke?", "85"),
    (_KELLUKE, "How much do farmers pay to rent a machine through the app?", None),
    (_COMET, "Who discovered Comet Hale-Bopp?", "Alan Hale and Thomas Bopp"),
    (_COMET, "How wide is the comet's nucleus?", "about 60 kilometres"),
    (_COMET, "When was Halley's Comet last seen from Earth?", None),
    (_POOL, "How much did the renovation cost?", "3.4 million pounds"),
    (_POOL, "Who manages the swimming pool?", "Owen Pryce"),
    (_POOL, "How much does a swimming ticket cost?", None),
    (_BADMINTON, "Who won the final?", "Wang Li"),
    (_BADMINTON, "How long did the match last?", "74 minutes"),
    (_BADMINTON, "How much prize money did Emi Tanaka receive?", None),
    (_TERRACOTTA, "Near which city was the Terracotta Army found?", "Xi'an"),
    (_TERRACOTTA, "How many soldiers do the pits hold?", "about 8,000"),
    (_TERRACOTTA, "When did Qin Shi Huang become emperor?", None),
    (_RECALL, "How many train sets were recalled?", "52,000"),
    (_RECALL, "What part of the toys could come loose?", "small wheels"),
    (_RECALL, "When was Maplewood Toys founded?", None),
    (_PHONEBOX, "How many books does the telephone box hold?", "about 120"),
    (_PHONEBOX, "Whose idea was the library?", "Derek Hollis"),
    (_PHONEBOX, "How much did the new shelves cost?", None),
    (_TERN, "How much does an Arctic tern weigh?", "about 100 grams"),
    (_TERN, "What do Arctic terns mainly eat?", "small fish"),
    (_TERN, "What colour is the Arctic tern's beak?", None),
]

for _ctx, _q, _a in HELD_OUT_3:  # every expected answer is its context's own text
    assert _a is None or _a in _ctx, (_q, _a)
