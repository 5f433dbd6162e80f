"""HELD_OUT_6: a sixth held-out QA set for extractive span QA, written 2026-11-28.

Written blind, by a writer who had not seen the QA method (nor its training data, code or earlier
results). It is measured once and is not used to choose anything. Twenty-two new short contexts
(topics, names and numbers not reused from the other qa_sets files) of many genres: news, science,
history, sport, business, everyday notices, three first-person product/service reviews, two
property/planning notices (a planning application, a house for sale), three shop listings or price
lists with several prices (a sewing machine and its accessories, a kayak and its paddles, castle
tickets for several groups) and two event programmes with several times. Three or four questions
each, 81 in all. Answers are names, numbers with their units, prices, times and short noun phrases,
each an exact substring of its context; some questions reuse the text's words, some paraphrase it,
and some ask about a thing named in an earlier sentence and referred to by "it"/"each one" in the
sentence with the answer. None = the text does not say (26 of 81): mostly questions whose answer
type appears in the text but for a different thing (another part's price, another group's ticket,
another competitor's time or distance, a number of residents when asked what a site will become,
the price before a sale when only the sale price is given, a charging time when asked how long a
charge lasts), and a few about details the text never mentions. Each case: (context, question,
expected answer or None).
"""

from __future__ import annotations

# --- news ---
_SINKHOLE = ("A sinkhole about nine metres wide opened in the car park of a supermarket in Ghent early on "
             "Wednesday, swallowing two parked vans. No one was hurt because the shop had not yet opened. "
             "Engineers from the city said a collapsed Victorian sewer beneath the car park was the likely cause. "
             "The supermarket, run by the chain Delvaux, will stay closed until at least next Monday while the "
             "hole is filled with concrete.")
_CAVERS = ("Four cavers trapped for three days in the Grotte de Saint-Marcel in southern France were brought to "
           "the surface on Sunday. The group had been exploring a flooded passage when heavy rain raised the "
           "water level and cut off their way out. Rescuers pumped out about 2,000 cubic metres of water before "
           "divers could reach them. The youngest caver, a 19-year-old student, was taken to hospital in "
           "Montelimar with mild hypothermia.")

# --- science ---
_AXOLOTL = ("The axolotl is a salamander that spends its whole life in water and keeps the feathery gills of a "
            "larva. In the wild it lives only in the canals and lakes of Xochimilco, on the southern edge of "
            "Mexico City. It can regrow lost legs, parts of its heart and even parts of its brain without "
            "scarring. Adults usually reach about 23 centimetres in length. Surveys in 2014 found roughly 36 "
            "animals per square kilometre, down from 6,000 in 1998.")
_PULSAR = ("In November 1967 Jocelyn Bell, a graduate student at Cambridge, noticed a strange signal in the data "
           "from a radio telescope she had helped to build. The source sent a pulse every 1.34 seconds, so "
           "regularly that the team briefly nicknamed it LGM-1, for little green men. It turned out to be a "
           "pulsar, a rapidly spinning neutron star. Her supervisor, Antony Hewish, shared the 1974 Nobel Prize "
           "in Physics for the discovery, but Bell did not.")

# --- history ---
_GUTENBERG = ("Johannes Gutenberg printed his famous Bible in Mainz around 1455, using movable metal type and an "
              "oil-based ink. About 180 copies were made, most on paper and some on vellum. Each page had 42 "
              "lines of text in two columns, which is why it is also called the 42-line Bible. Only 49 copies are "
              "known to survive today, and in 1978 one was sold for 2.2 million dollars.")
_TUNGUSKA = ("On the morning of 30 June 1908 a huge explosion flattened about 80 million trees over an area of "
             "2,150 square kilometres near the Podkamennaya Tunguska River in Siberia. Most scientists think it "
             "was caused by a meteoroid or small comet bursting in the air several kilometres above the ground. "
             "Because the area was so remote, the first scientific expedition, led by Leonid Kulik, did not reach "
             "the site until 1927. He expected to find a large crater but found none.")

# --- sport ---
_SKIJUMP = ("Slovenia's Ana Kovac won the women's ski jumping World Cup event in Planica on Saturday with jumps of "
            "131 and 127.5 metres. Austria's Lisa Hofer, who led after the first round with a jump of 133 "
            "metres, fell back to second place after landing short in the final round. Norway's Ingrid Dahl was "
            "third. Kovac's win, her fourth of the season, moves her to the top of the overall standings, 40 "
            "points ahead of Hofer.")
_RELAY = ("Australia won the men's 4x100 metres freestyle relay at the Pan-Pacific Championships in Tokyo on "
          "Friday in 3 minutes 09.8 seconds. Their anchor swimmer, Liam Carter, overtook the American team in the "
          "last 20 metres. The United States finished second, and Japan took bronze in front of a home crowd. "
          "Earlier in the evening, Canada's Chloe Bouchard broke the championship record in the women's 200 "
          "metres butterfly, touching in 2 minutes 05.1 seconds.")

# --- business ---
_BREWERY = ("The family-owned Belgian brewery Van Roost has sold a majority stake to the Dutch drinks group "
            "Hollandia for 85 million euros. The brewery, founded in 1892 in the village of Opwijk, makes about "
            "400,000 hectolitres of beer a year, mostly dark abbey ales. Hollandia will buy 60 percent of the "
            "shares, while the Van Roost family keeps the rest. Brewery director Els Van Roost said no jobs would "
            "be lost and the recipes would not change.")
_SCOOTERS = ("The Lisbon e-scooter operator Trotta reported its first annual profit on Tuesday, earning 4.6 million "
             "euros on revenue of 58 million. The company now runs 21,000 scooters in 14 European cities, after "
             "leaving Rome and Vienna last year. Chief executive Marta Seixas credited swappable batteries, which "
             "let staff change a flat battery on the street instead of taking the scooter back to a depot. Trotta "
             "plans to launch electric bicycles in Porto next spring.")

# --- everyday notices ---
_LIFT = ("NOTICE: The lift in Block C of Harrow Court will be out of service from Monday 2 June to Friday 13 June "
         "while its motor and control panel are replaced. Residents who cannot use the stairs should call the "
         "housing office on 0161 496 0732 to arrange help with shopping and deliveries. The lift in Block B will "
         "remain in use, and the connecting door between the two blocks on the second floor will be left "
         "unlocked during the works.")
_MARKET = ("From Saturday 5 April the Eastgate farmers' market will move from the cathedral square to the car park "
           "behind the old fire station while the square is repaved. The market will run from 8 a.m. to 1 p.m., "
           "an hour shorter than before. There will be room for 35 stalls instead of the usual 48, so some traders "
           "will attend on alternate weeks. Parking for shoppers will be available at the leisure centre, free "
           "for the first two hours.")

# --- first-person product / service reviews ---
_DRILL = ("I bought the Brenner CD-18 cordless drill to put up shelves in our new flat, and it has been worth "
          "every cent. It drilled cleanly into brick with the right bit, and the two batteries mean I never have "
          "to stop halfway through a job. Each one charges in about 45 minutes. The weak point is the carry case: "
          "its plastic clasp snapped within a week. The drill also feels heavy after a while; it weighs 1.9 "
          "kilograms.")
_MOVERS = ("We used Swift & Sons to move from Leeds to Bristol in September, and I would book them again. The "
           "two-man crew arrived at 7.30 a.m. as promised and had the whole three-bedroom house loaded by "
           "lunchtime. They wrapped every piece of furniture in blankets, but a glass lampshade still arrived "
           "cracked. The company refunded 60 pounds for it without any argument. The total bill was 1,450 "
           "pounds, about 200 less than the other quotes we had.")
_JACKET = ("I have worn the Fjellmark Storm jacket on my dog walks all winter. It is properly waterproof: after an "
           "hour of heavy rain my shirt underneath was still dry. The hood is the best feature, with a stiff peak "
           "that keeps water off my glasses. On the other hand, the sleeves are too short for my long arms, and "
           "the zips are hard to use with gloves on. I paid 179 euros for it in a sale, down from the usual "
           "price.")

# --- property / planning notices ---
_GRANARY = ("Planning application 25/0392: Northbank Homes seeks permission to convert the former Carrow grain "
            "warehouse on Quay Street into 64 flats, with a ground-floor cafe and a cycle store for 90 bikes. The "
            "brick building, built in 1889, has been empty since 2011. The empty car park beside it is not part "
            "of the application and its future has not been decided, although about 250 residents have signed a "
            "petition about it. Comments can be sent to the planning office until 19 February.")
_COTTAGE = ("For sale: Willow Cottage, Church Lane, Little Harden. A two-bedroom stone cottage with a wood burner, "
            "a modern kitchen and a south-facing garden of about 400 square metres. The property sits on a quiet "
            "lane, a ten-minute walk from the village shop and primary school. Offers over 315,000 pounds. The "
            "owners have already found a new home, so there is no onward chain. Viewings by appointment with "
            "Marsh & Pryce, Saturday mornings only.")

# --- shop listings / price lists with several prices ---
_SEWING = ("Stella 300 sewing machine, 229 euros. The machine comes with a foot pedal, four presser feet, a pack "
           "of needles and a soft dust cover. An extension table for quilting is sold separately at 39 euros, and "
           "a walking foot for thick fabrics costs 24 euros. Replacement bobbins are 6 euros for a pack of ten. "
           "All Stella machines carry a five-year warranty, but the foot pedal is covered for two years only.")
_KAYAK = ("Sale: Orca Tour 12 sea kayak, now 849 dollars. The kayak is 3.6 metres long and has a padded seat, two "
          "sealed storage hatches and a rudder that is steered with foot pedals. Paddles are not included: the "
          "matching carbon paddle costs 189 dollars and an aluminium paddle 69 dollars. A spray skirt is 55 "
          "dollars. Free delivery within 50 kilometres of our Nanaimo store; longer deliveries are quoted on "
          "request.")
_CASTLE = ("Caldwick Castle admission: adults 16 pounds; children aged 5 to 15, 8 pounds; children under 5 free. "
           "A family ticket for two adults and up to three children costs 42 pounds. Guided tours of the "
           "dungeons run at 11 a.m. and 2 p.m. and cost an extra 5 pounds per person. The castle is open daily "
           "from 10 a.m. to 5 p.m., April to October, and last entry is one hour before closing.")

# --- event programmes ---
_FOODFEST = ("Harbourside Food Festival, Saturday 14 September. 10 a.m.: gates open and the market stalls start "
             "trading. 11.30 a.m.: bread-baking demonstration with the baker Oona Fitzgerald in the main tent. "
             "1 p.m.: oyster-shucking contest on the quay. 3 p.m.: cookery show by the chef Marco Ferri, who will "
             "cook a three-course lunch using only local fish. 6 p.m.: live music on the harbour stage until the "
             "festival closes at 9 p.m.")
_OPENDAY = ("Kellerton College open day, Saturday 8 November. Registration opens at 9 a.m. in the Main Hall. The "
            "principal, Dr Ruth Okafor, will give a welcome talk at 9.30 a.m. Talks on science and engineering "
            "courses run from 10 a.m. to 12 noon in the Brunel Building, and arts and humanities talks from "
            "1 p.m. to 3 p.m. in the library. Campus tours leave from the Main Hall every half hour. Lunch is "
            "served in the refectory for 4.50 pounds.")

HELD_OUT_6 = [
    (_SINKHOLE, "How wide is the sinkhole?", "about nine metres"),
    (_SINKHOLE, "What do the engineers think caused the hole?", "a collapsed Victorian sewer"),
    (_SINKHOLE, "How deep is the sinkhole?", None),
    (_CAVERS, "For how long were the cavers stuck underground?", "three days"),
    (_CAVERS, "What raised the water level in the cave?", "heavy rain"),
    (_CAVERS, "How old was the oldest member of the group?", None),
    (_AXOLOTL, "Where are axolotls found in the wild?", "the canals and lakes of Xochimilco"),
    (_AXOLOTL, "How long are adult axolotls?", "about 23 centimetres"),
    (_AXOLOTL, "How many axolotls per square kilometre were there in 1998?", "6,000"),
    (_AXOLOTL, "How many years does an axolotl live?", None),
    (_PULSAR, "How often did the source send out a pulse?", "every 1.34 seconds"),
    (_PULSAR, "What nickname did the team give the source?", "LGM-1"),
    (_PULSAR, "What did the source of the signal turn out to be?", "a pulsar"),
    (_PULSAR, "In what year did Jocelyn Bell finish her doctorate?", None),
    (_GUTENBERG, "What kind of ink did Gutenberg use?", "an oil-based ink"),
    (_GUTENBERG, "How many copies of the Gutenberg Bible still exist?", "49"),
    (_GUTENBERG, "How many copies were printed on vellum?", None),
    (_GUTENBERG, "What price did a copy fetch in 1978?", "2.2 million dollars"),
    (_TUNGUSKA, "How many trees did the explosion knock down?", "about 80 million"),
    (_TUNGUSKA, "What did Leonid Kulik expect to find at the site?", "a large crater"),
    (_TUNGUSKA, "How many people were killed by the explosion?", None),
    (_SKIJUMP, "How long was Lisa Hofer's first-round jump?", "133 metres"),
    (_SKIJUMP, "Who came third?", "Ingrid Dahl"),
    (_SKIJUMP, "How far did Ingrid Dahl jump?", None),
    (_SKIJUMP, "How far ahead of Hofer is Kovac in the overall standings?", "40 points"),
    (_RELAY, "What was Australia's winning time in the relay?", "3 minutes 09.8 seconds"),
    (_RELAY, "What was the United States team's time?", None),
    (_RELAY, "Who swam the last leg for Australia?", "Liam Carter"),
    (_RELAY, "In which event did Chloe Bouchard set a championship record?", "the women's 200 metres butterfly"),
    (_BREWERY, "How much is Hollandia paying for its stake in Van Roost?", "85 million euros"),
    (_BREWERY, "What kind of beer does Van Roost mainly brew?", "dark abbey ales"),
    (_BREWERY, "How many people does the brewery employ?", None),
    (_SCOOTERS, "What was Trotta's revenue?", "58 million"),
    (_SCOOTERS, "Which cities did Trotta pull out of last year?", "Rome and Vienna"),
    (_SCOOTERS, "What did Marta Seixas say was behind the profit?", "swappable batteries"),
    (_SCOOTERS, "How much does a ride on a Trotta scooter cost?", None),
    (_LIFT, "Which parts of the lift are being replaced?", "its motor and control panel"),
    (_LIFT, "What number should residents ring for help with their shopping?", "0161 496 0732"),
    (_LIFT, "When will the lift in Block B be repaired?", None),
    (_MARKET, "Which site will the market use from April?", "the car park behind the old fire station"),
    (_MARKET, "How many stalls will there be space for?", "35"),
    (_MARKET, "How much does parking cost after the first two hours?", None),
    (_DRILL, "How much does the Brenner CD-18 weigh?", "1.9 kilograms"),
    (_DRILL, "What broke within a week?", "its plastic clasp"),
    (_DRILL, "How much did the drill cost?", None),
    (_DRILL, "How long does one battery charge last?", None),
    (_MOVERS, "What was damaged during the move?", "a glass lampshade"),
    (_MOVERS, "How much did Swift & Sons refund for the lampshade?", "60 pounds"),
    (_MOVERS, "How much did the move cost in total?", "1,450 pounds"),
    (_MOVERS, "How long did the drive from Leeds to Bristol take?", None),
    (_JACKET, "What does the reviewer like best about the jacket?", "The hood"),
    (_JACKET, "How much did the reviewer pay for the Fjellmark Storm?", "179 euros"),
    (_JACKET, "What did the jacket cost before the sale?", None),
    (_JACKET, "How much does the jacket weigh?", None),
    (_GRANARY, "What would the Carrow warehouse be converted into?", "64 flats"),
    (_GRANARY, "How many bicycles will the cycle store hold?", "90 bikes"),
    (_GRANARY, "How many car parking spaces will the flats have?", None),
    (_GRANARY, "What will the car park next to the warehouse become?", None),
    (_COTTAGE, "What is the asking price for Willow Cottage?", "315,000 pounds"),
    (_COTTAGE, "Which agent arranges viewings?", "Marsh & Pryce"),
    (_COTTAGE, "How many bathrooms does the cottage have?", None),
    (_SEWING, "How much is the walking foot?", "24 euros"),
    (_SEWING, "Which accessory is meant for quilting?", "An extension table"),
    (_SEWING, "How much does the dust cover cost on its own?", None),
    (_SEWING, "How long is the foot pedal under warranty?", "two years"),
    (_KAYAK, "What was the price of the kayak before the sale?", None),
    (_KAYAK, "How much does the aluminium paddle cost?", "69 dollars"),
    (_KAYAK, "How is the rudder steered?", "with foot pedals"),
    (_KAYAK, "What does delivery cost for a customer 80 kilometres from the store?", None),
    (_CASTLE, "How much is a ticket for a ten-year-old?", "8 pounds"),
    (_CASTLE, "What does the family ticket cost?", "42 pounds"),
    (_CASTLE, "How much is a ticket for a pensioner?", None),
    (_CASTLE, "How much extra is the dungeon tour?", "5 pounds"),
    (_FOODFEST, "What time does the oyster-shucking contest start?", "1 p.m."),
    (_FOODFEST, "Who is leading the bread-baking demonstration?", "Oona Fitzgerald"),
    (_FOODFEST, "When does Marco Ferri's cookery show begin?", "3 p.m."),
    (_FOODFEST, "How much is a ticket to the festival?", None),
    (_OPENDAY, "Which building hosts the science and engineering talks?", "the Brunel Building"),
    (_OPENDAY, "At what time does the principal's welcome talk start?", "9.30 a.m."),
    (_OPENDAY, "How much does lunch cost?", "4.50 pounds"),
    (_OPENDAY, "What time does the last campus tour leave?", None),
]

for _ctx, _q, _a in HELD_OUT_6:  # every expected answer is its context's own text
    assert _a is None or _a in _ctx, (_q, _a)
