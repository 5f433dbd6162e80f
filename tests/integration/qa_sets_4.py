"""HELD_OUT_4: a fourth held-out QA set for extractive span QA, written 2026-11-26.

Written by a writer who had not seen either QA method (the trained span-head reader or the
decoder's span decoding), nor their training data. It is measured once and is not used to choose
anything. Twenty new short contexts (topics, names and numbers not reused from qa_sets_3.py) of
many genres: news, science, history, sport, business, everyday notices, and six first-person
product/service reviews in the spirit of SubjQA ("The battery lasts ..., but ..."). Three or four
questions each, 71 in all. Answers are names, numbers with their units, dates, places and short
phrases, each an exact substring of its context; some questions reuse the text's words, some
paraphrase it (synonyms, different word order). None = the text does not say (21 of 71): mostly
questions whose answer type appears in the text but for a different thing (another date, price,
person, number), a few about a detail the text never mentions, and a few that swap a detail (the
runner-up's time when only the winner's is given). Each case: (context, question, expected answer
or None).
"""

from __future__ import annotations

# --- news ---
_ASTROLABE = ("Thieves broke into the City Museum of Bruges on Tuesday night and stole a brass astrolabe made in "
              "Lisbon in 1568. The instrument, one of only about 40 of its kind known to survive, had been on loan "
              "from a private collector in Seville. Police said the thieves entered through a skylight and were "
              "inside for less than seven minutes. The museum has offered a reward of 15,000 euros for information "
              "leading to its return.")
_STORM = ("Storm Imelda brought winds of up to 145 kilometres per hour to the west coast of Ireland on Thursday, "
          "leaving about 70,000 homes without electricity. In Galway, a section of the seafront promenade was "
          "flooded and several cars were swept into the bay. Ferries to the Aran Islands were cancelled for a "
          "second day. The national weather service expects the winds to ease by Saturday morning.")

# --- science ---
_TARDIGRADE = ("Tardigrades, also called water bears, are microscopic animals with eight legs that live in moss, "
               "soil and sea sediment. Most adults are about half a millimetre long. When their surroundings dry "
               "out, they curl into a state called a tun and can survive for decades without water. In 2007 a "
               "European space mission exposed thousands of them to open space for ten days, and some survived "
               "and later laid eggs.")
_VENTS = ("Hydrothermal vents were first observed in 1977 by scientists in the submersible Alvin near the "
          "Galapagos Islands. The vents release water heated by magma to as much as 400 degrees Celsius, which "
          "stays liquid because of the enormous pressure. Instead of sunlight, the animals around them depend on "
          "bacteria that turn chemicals such as hydrogen sulphide into food. Giant tube worms found there can "
          "grow to more than two metres long.")
_ORCHID = ("Botanists from Kew Gardens have described a new species of orchid that grows only on a single "
           "mountain in northern Madagascar. The plant, named Cynorkis lumina, has pale pink flowers about two "
           "centimetres wide and blooms for only a few days each January. Fewer than 70 plants are known, all "
           "growing on mossy rocks above 1,200 metres. The researchers have asked for it to be listed as "
           "critically endangered.")

# --- history ---
_TELEGRAPH = ("The first transatlantic telegraph cable was completed in August 1858, linking Valentia Island in "
              "Ireland with Trinity Bay in Newfoundland. Queen Victoria sent a message of congratulation to "
              "President James Buchanan, but its 98 words took more than sixteen hours to transmit. The cable "
              "failed after only three weeks, partly because the engineer Wildman Whitehouse had applied far too "
              "high a voltage. A lasting connection was not achieved until 1866, when the ship Great Eastern laid "
              "a stronger cable.")
_ROSETTA = ("The Rosetta Stone was found in July 1799 by French soldiers rebuilding a fort near the town of Rashid "
            "in the Nile Delta. It carries the same decree in three scripts: hieroglyphs, Demotic and ancient "
            "Greek. After the French surrender in Egypt, the stone was handed to the British and has been in the "
            "British Museum since 1802. Jean-Francois Champollion announced in 1822 that he had deciphered the "
            "hieroglyphs.")

# --- sport ---
_REGATTA = ("The women's eight from Utrecht won the final of the Bled International Regatta on Saturday, "
            "finishing a length and a half ahead of the crew from Poznan. Their time of 6 minutes 14 seconds was "
            "a course record on the lake. Utrecht had trailed at the halfway mark until their stroke, Marit de "
            "Vries, raised the rate. The crew's coach, Anneke Bos, said it was their first win abroad since 2018.")
_BASKETBALL = ("The Melbourne Comets beat the Perth Harbour Hawks 94-88 on Sunday to win the national basketball "
               "title for the first time. Guard Jaylen Brooks scored 31 points, including the three-pointer that "
               "gave Melbourne the lead with 40 seconds left. Perth's captain, Sam Oduya, was named the season's "
               "most valuable player last week. The final was watched by a sell-out crowd of 15,400 at Docklands "
               "Arena.")

# --- business ---
_ROASTER = ("The Oslo coffee roaster Bonne & Brenn has agreed to be bought by the German food group Kernhaus for "
            "140 million euros, the companies said on Thursday. Bonne & Brenn, founded in 2011 by the former "
            "barista Sigrid Holm, runs 34 cafes in Norway and Sweden. Kernhaus said it would keep the brand and "
            "the Oslo roastery, which employs 230 people. Holm will stay on as chief executive for at least two "
            "years.")
_SHOES = ("The Portuguese shoe maker Passo Firme reported sales of 312 million euros for the first half of the "
          "year, up 14 percent, driven by strong demand for its walking boots in Germany and Japan. Chief "
          "executive Rui Matos said the company would open a second factory, near Braga, in 2027, creating about "
          "450 jobs. Profits fell slightly, however, because of higher leather prices. Shares in the company rose "
          "6 percent in Lisbon.")

# --- everyday notices ---
_WATER = ("NOTICE TO RESIDENTS: The water supply to Birch Lane, Elm Close and the eastern half of Station Road "
          "will be turned off on Tuesday 14 May from 8 a.m. to 4 p.m. while Valley Water replaces a leaking main. "
          "Bottled water will be available from the community hall on Birch Lane during the works. When the "
          "supply returns, the water may look cloudy for a short time; run the cold tap until it clears.")
_BINS = ("From Monday 10 March, household waste in the Northfield district will be collected every two weeks "
         "instead of weekly. Recycling and garden waste will still be collected every Thursday. Bins must be at "
         "the kerb by 7 a.m. on collection day, with lids fully closed. Residents who need a larger bin can "
         "request one from the council website for a fee of 28 pounds.")
_CENTRE = ("Greenfield Community Centre summer hours: from 1 July to 31 August the centre will open at 9 a.m. and "
           "close at 6 p.m., Monday to Saturday, and it will be closed on Sundays. The cafe will be shut for "
           "refurbishment throughout July. Yoga classes move from the main hall to Room 4 for the summer. The "
           "annual open day will take place on Saturday 23 August, with free entry for all.")

# --- first-person product / service reviews ---
_EARBUDS = ("I bought the Sonara Pods 2 for my commute and have used them every day for a month. The battery "
            "lasts about six hours per charge, which is enough for a full working day of calls, and the case adds "
            "three more charges. The noise cancelling works well on the train but does little against wind. My "
            "only real complaint is the fit: the left bud keeps slipping out when I run. For 89 dollars, though, "
            "I think they are a bargain.")
_HOTEL = ("We stayed three nights at the Hotel Miramar in Split in June. The room was small but spotless, and the "
          "balcony had a lovely view of the harbour. Breakfast was the highlight: fresh figs, local cheese and "
          "excellent coffee. However, the walls were thin and we could hear the bar downstairs until well after "
          "midnight. At 135 euros a night it was fair value, but light sleepers should ask for a room on the top "
          "floor.")
_VACUUM = ("I have owned the Kleen R7 robot vacuum for two months, and it has changed how often I clean. It "
           "handles hardwood floors and short rugs easily, and the app lets me set a schedule while I am at work. "
           "The suction is strong, but it gets stuck under my sofa at least twice a week. Its dust bin is tiny and "
           "has to be emptied after every run. The battery runs for about 110 minutes, enough for my whole flat.")
_RESTAURANT = ("My partner and I had dinner at Casa Lumbre on a Friday night, and I would go back tomorrow. The "
               "grilled octopus was tender and smoky, easily the best dish of the evening. The lamb, on the other "
               "hand, arrived lukewarm and rather dry. Service was friendly but slow: we waited forty minutes for "
               "our mains. Our bill came to 96 dollars for two, including a bottle of house red.")
_NOVEL = ("I picked up The Salt Orchard by Ines Calder expecting a gentle family saga, and the opening chapters "
          "are exactly that. Then the book turns into a tense mystery about a missing sister, and I could not put "
          "it down. The characters feel real, especially the grandmother, Odile. My one criticism is the ending, "
          "which felt rushed after 380 pages of careful build-up. It is still the best novel I have read this "
          "year.")
_EREADER = ("I switched to the Folio Lite e-reader after my old tablet died, and I wish I had done it sooner. The "
            "screen is sharp and easy on the eyes, even in bright sunlight at the beach. The battery lasts for "
            "weeks: I charged it once in October and again in early December. The page buttons, however, feel "
            "cheap and one has started to squeak. It weighs just 170 grams, so I can hold it in one hand in bed.")

HELD_OUT_4 = [
    (_ASTROLABE, "When was the astrolabe made?", "1568"),
    (_ASTROLABE, "How did the burglars get into the building?", "through a skylight"),
    (_ASTROLABE, "Who owns the stolen instrument?", "a private collector in Seville"),
    (_ASTROLABE, "How much was the astrolabe insured for?", None),
    (_STORM, "How strong were the winds brought by Storm Imelda?", "up to 145 kilometres per hour"),
    (_STORM, "How many households lost power?", "about 70,000"),
    (_STORM, "When are the winds expected to die down?", "by Saturday morning"),
    (_STORM, "How many people were injured in the storm?", None),
    (_TARDIGRADE, "How many legs does a tardigrade have?", "eight"),
    (_TARDIGRADE, "What is the dormant form that tardigrades take when they dry out called?", "a tun"),
    (_TARDIGRADE, "In what year were tardigrades first described by scientists?", None),
    (_VENTS, "When were hydrothermal vents first observed?", "1977"),
    (_VENTS, "What was the name of the submersible?", "Alvin"),
    (_VENTS, "How hot can the water coming out of the vents get?", "400 degrees Celsius"),
    (_VENTS, "How deep is the seabed at the Galapagos vents?", None),
    (_ORCHID, "How wide are the orchid's flowers?", "about two centimetres"),
    (_ORCHID, "At what altitude do the plants grow?", "above 1,200 metres"),
    (_ORCHID, "Who paid for the expedition that found the orchid?", None),
    (_TELEGRAPH, "Which ship laid the 1866 cable?", "Great Eastern"),
    (_TELEGRAPH, "Whose error helped cause the first cable to break down?", "Wildman Whitehouse"),
    (_TELEGRAPH, "Who paid for the 1858 cable?", None),
    (_ROSETTA, "Who found the Rosetta Stone?", "French soldiers"),
    (_ROSETTA, "Since what year has the stone been kept in the British Museum?", "1802"),
    (_ROSETTA, "When did Champollion first see the Rosetta Stone?", None),
    (_REGATTA, "Which city's crew won the women's eight final?", "Utrecht"),
    (_REGATTA, "What was the winning time?", "6 minutes 14 seconds"),
    (_REGATTA, "Who coaches the Utrecht crew?", "Anneke Bos"),
    (_REGATTA, "What was the time of the crew from Poznan?", None),
    (_BASKETBALL, "What was the final score?", "94-88"),
    (_BASKETBALL, "Who was voted the season's MVP?", "Sam Oduya"),
    (_BASKETBALL, "How many points did Sam Oduya score in the final?", None),
    (_ROASTER, "How much is Kernhaus paying for the coffee roaster?", "140 million euros"),
    (_ROASTER, "Who set up Bonne & Brenn?", "Sigrid Holm"),
    (_ROASTER, "How much profit did Bonne & Brenn make last year?", None),
    (_SHOES, "How much did Passo Firme sell in the first half of the year?", "312 million euros"),
    (_SHOES, "Where will the new factory be built?", "near Braga"),
    (_SHOES, "Why did profits fall?", "higher leather prices"),
    (_SHOES, "By how much did sales grow in Japan?", None),
    (_WATER, "Which company is replacing the water main?", "Valley Water"),
    (_WATER, "Until what time will the water be off?", "4 p.m."),
    (_WATER, "Where can residents pick up bottled water?", "the community hall on Birch Lane"),
    (_WATER, "On which date will Station Road be resurfaced?", None),
    (_BINS, "How often will household waste be collected from March?", "every two weeks"),
    (_BINS, "What does it cost to get a bigger bin?", "28 pounds"),
    (_BINS, "What time does the collection lorry finish its round?", None),
    (_CENTRE, "What time does the centre close in summer?", "6 p.m."),
    (_CENTRE, "Where will yoga classes take place during the summer?", "Room 4"),
    (_CENTRE, "How much does a yoga class cost?", None),
    (_CENTRE, "When will the cafe reopen?", None),
    (_EARBUDS, "How long does the battery last?", "about six hours"),
    (_EARBUDS, "Which earbud falls out during running?", "the left bud"),
    (_EARBUDS, "What does the reviewer think of the price?", "a bargain"),
    (_EARBUDS, "How long does the charging case take to recharge?", None),
    (_HOTEL, "What was the best part of the stay?", "Breakfast"),
    (_HOTEL, "How much did a night at the Hotel Miramar cost?", "135 euros"),
    (_HOTEL, "What noise kept the guests awake?", "the bar downstairs"),
    (_HOTEL, "How far is the hotel from the beach?", None),
    (_VACUUM, "Where does the robot vacuum get stuck?", "under my sofa"),
    (_VACUUM, "How long does one charge of the battery last?", "about 110 minutes"),
    (_VACUUM, "How much did the Kleen R7 cost?", None),
    (_RESTAURANT, "Which dish did the reviewer like most?", "grilled octopus"),
    (_RESTAURANT, "How long did they wait for the main courses?", "forty minutes"),
    (_RESTAURANT, "What was wrong with the lamb?", "lukewarm and rather dry"),
    (_RESTAURANT, "How much did the bottle of wine cost?", None),
    (_NOVEL, "Who wrote The Salt Orchard?", "Ines Calder"),
    (_NOVEL, "Which character did the reviewer find most convincing?", "Odile"),
    (_NOVEL, "What part of the book disappointed the reviewer?", "the ending"),
    (_NOVEL, "When was the novel published?", None),
    (_EREADER, "How heavy is the Folio Lite?", "170 grams"),
    (_EREADER, "What feels cheap on the e-reader?", "The page buttons"),
    (_EREADER, "How much storage does the e-reader have?", None),
]

for _ctx, _q, _a in HELD_OUT_4:  # every expected answer is its context's own text
    assert _a is None or _a in _ctx, (_q, _a)
