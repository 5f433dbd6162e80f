"""The multilingual NER set the project ships (assets/data/ner_multilingual): German, French,
Italian and English (the book's PAN-X languages), PER / ORG / LOC as BIO tags per word.

Made by `python -m backend.engines.ner.languages` (deterministic), from two sources:
- hand-written sentences in bracket notation (`[PER Angela Merkel] besuchte [LOC Rom] .`), one a
  line, in `sources/<lang>-<split>.txt`: every test sentence and part of each train split;
- templates (below) filled from per-language name lists with a seeded generator: the rest of each
  train split and the validation split (which shares no sentence with train).
The test splits are hand-written only, in other shapes than the templates', so a template
learned by heart does not score on test. A unit test checks that the files equal what this makes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[3] / "assets" / "data" / "ner_multilingual"
LANGUAGES = ("de", "fr", "it", "en")
LANGUAGE_NAMES = {"de": "German", "fr": "French", "it": "Italian", "en": "English"}
TYPES = ("PER", "ORG", "LOC")
SPLITS = ("train", "validation", "test")
TEMPLATE_COUNTS = {"train": 220, "validation": 40}  # per language
SEED = 51

# Names per language: people, organisations, places as that language's press writes them.
NAMES = {
    "de": {
        "PER": ["Angela Merkel", "Olaf Scholz", "Thomas Müller", "Helene Fischer", "Jürgen Klopp", "Lena Meyer",
                "Karl Lagerfeld", "Annalena Baerbock", "Dirk Nowitzki", "Sabine Schulz", "Max Weber",
                "Clara Zetkin", "Franz Beckenbauer", "Heike Drechsler", "Stefan Hoffmann", "Ursula von der Leyen", "Katarina Witt", "Heinrich Böll", "Steffi Graf", "Markus Söder", "Anna Seghers", "Wolfgang Schäuble", "Fritz Haber", "Nina Hagen", "Peter Maffay", "Jan Ullrich", "Petra Kelly", "Lukas Podolski"],
        "ORG": ["Siemens", "Deutsche Bahn", "Volkswagen", "Bayern München", "BASF", "Borussia Dortmund",
                "Lufthansa", "Adidas", "Zalando", "SAP", "Bosch", "Commerzbank", "Hertha BSC", "Porsche",
                "Max-Planck-Gesellschaft", "Deutsche Bank", "Bertelsmann", "Henkel", "ZDF", "Rheinmetall", "Fraunhofer-Gesellschaft", "VfB Stuttgart", "Hapag-Lloyd", "Continental", "Allianz", "Spiegel", "Goethe-Institut"],
        "LOC": ["Berlin", "München", "Hamburg", "Köln", "Frankfurt am Main", "Dresden", "Bayern", "Leipzig",
                "Österreich", "Stuttgart", "Wien", "Bremen", "Sachsen", "Düsseldorf", "Zürich", "Rostock", "Nürnberg", "Hannover", "Münster", "Freiburg", "Thüringen", "Schleswig-Holstein", "Innsbruck", "Basel", "Potsdam", "Heidelberg", "Sylt", "Mosel"],
    },
    "fr": {
        "PER": ["Emmanuel Macron", "Kylian Mbappé", "Marie Curie", "Victor Hugo", "Édith Piaf", "Zinédine Zidane",
                "Simone Veil", "Jean Dupont", "Amélie Nothomb", "Thomas Pesquet", "Claire Martin", "Louis Pasteur",
                "Christine Lagarde", "Antoine Griezmann", "Sophie Marceau", "Jacques Chirac", "Jean Jaurès", "Coco Chanel", "Nicolas Sarkozy", "Marion Cotillard", "Teddy Riner", "Simone de Beauvoir", "Pierre Boulez", "Aya Nakamura", "Yannick Noah", "Anne Hidalgo", "Gustave Eiffel", "Jules Verne"],
        "ORG": ["Renault", "Air France", "Danone", "TotalEnergies", "Michelin", "Airbus", "Radio France",
                "Peugeot", "Carrefour", "Ubisoft", "Decathlon", "Capgemini", "Dassault Aviation", "Orange",
                "Stade Rennais", "Hermès", "Vinci", "Saint-Gobain", "France Télévisions", "Thales", "BNP Paribas", "Sodexo", "Girondins de Bordeaux", "Le Monde", "Libération", "Safran", "Publicis"],
        "LOC": ["Paris", "Lyon", "Marseille", "Bordeaux", "Toulouse", "Lille", "Nice", "Strasbourg", "Genève",
                "Nantes", "Montpellier", "Rennes", "Bruxelles", "Montréal", "Grenoble", "Dijon", "Reims", "Orléans", "Angers", "Besançon", "Provence", "Alsace", "Lausanne", "Biarritz", "Ajaccio", "Calais", "Limoges", "Québec"],
    },
    "it": {
        "PER": ["Sergio Mattarella", "Giorgia Meloni", "Roberto Baggio", "Laura Pausini", "Umberto Eco",
                "Federica Pellegrini", "Dante Alighieri", "Mario Draghi", "Sofia Goggia", "Marco Rossi",
                "Giulia Bianchi", "Enzo Ferrari", "Rita Levi-Montalcini", "Luciano Pavarotti", "Paolo Sorrentino",
                "Alessandro Manzoni", "Giacomo Puccini", "Oriana Fallaci", "Valentino Rossi", "Silvio Berlusconi", "Monica Bellucci", "Alberto Tomba", "Primo Levi", "Natalia Ginzburg", "Andrea Bocelli", "Carlo Rubbia", "Nilde Iotti", "Francesco Totti"],
        "ORG": ["Eni", "Ferrari", "Barilla", "Pirelli", "Leonardo", "Fincantieri", "Lavazza", "Benetton",
                "Mediaset", "Luxottica", "Unicredit", "Generali", "Trenitalia", "Intesa Sanpaolo", "Juventus", "Mondadori", "Ansa", "Poste Italiane", "Enel", "Luxottica Group", "Sampdoria", "Corriere della Sera", "Armani", "Prada", "Autogrill", "Ducati", "Feltrinelli"],
        "LOC": ["Roma", "Milano", "Napoli", "Torino", "Firenze", "Venezia", "Palermo", "Genova", "Bologna", "Bari",
                "Verona", "Trieste", "Cagliari", "Perugia", "Catania", "Lugano", "Modena", "Brescia", "Rimini", "Salerno", "Puglia", "Calabria", "Liguria", "Aosta", "Matera", "Pescara", "Udine", "Taormina"],
    },
    "en": {
        "PER": ["Barack Obama", "Serena Williams", "Jane Austen", "Elon Musk", "Taylor Swift", "Stephen Hawking",
                "Emma Watson", "John Smith", "Lewis Hamilton", "Mary Johnson", "Winston Churchill", "Ada Lovelace",
                "David Attenborough", "Michelle Obama", "Tim Cook", "Harry Kane", "Virginia Woolf", "Andy Murray", "Margaret Thatcher", "Paul McCartney", "Greta Gerwig", "Alan Turing", "Oprah Winfrey", "Kate Bush", "Tony Blair", "Simone Biles", "Isaac Newton", "Joe Biden"],
        "ORG": ["Google", "Microsoft", "Manchester United", "Boeing", "NASA", "Amazon", "Tesla", "Chelsea",
                "Rolls-Royce", "Oxford University", "Apple", "Unilever", "Barclays", "Greenpeace", "UNICEF", "Vodafone", "HSBC", "Sainsbury's", "Arsenal Football Club", "Reuters", "Greenpeace UK", "IBM", "Netflix", "Unilever Group", "Harvard University", "Pfizer", "Jaguar"],
        "LOC": ["London", "New York", "Scotland", "California", "Chicago", "Texas", "Ireland", "Manchester",
                "Boston", "Wales", "Sydney", "Canada", "Edinburgh", "Seattle", "Dublin", "Toronto", "Nottingham", "Glasgow", "Yorkshire", "Cornwall", "Oregon", "Florida", "Melbourne", "Vancouver", "Brighton", "Cambridge", "Leicester", "Ohio"],
    },
}

# Templates by genre (news, sport, business, travel, science, culture, everyday; questions, appositions, lists); {PER} {ORG} {LOC}
# are filled from NAMES (a second slot of a type: {PER2}, {LOC2}). Words are separated by spaces.
TEMPLATES = {
    "de": [
        "{PER} hat am Montag in {LOC} eine Rede gehalten .",
        "Laut {ORG} steigen die Preise in {LOC} weiter .",
        "{PER} wechselt im Sommer von {ORG} zu {ORG2} .",
        "Der Zug von {LOC} nach {LOC2} hatte zwei Stunden Verspätung .",
        "{ORG} eröffnet ein neues Werk bei {LOC} .",
        "Gestern traf sich {PER} mit {PER2} zu Gesprächen .",
        "Die Forscher von {ORG} haben eine neue Methode vorgestellt .",
        "In {LOC} regnet es heute den ganzen Tag .",
        "{PER} lebt seit vielen Jahren in {LOC} .",
        "Das Konzert von {PER} in {LOC} war ausverkauft .",
        "Wir fahren im Urlaub an den Strand und lesen viel .",
        "Nach dem Spiel gegen {ORG} lobte {PER} die Mannschaft .",
        "Der Aufsichtsrat von {ORG} hat {PER} an die Spitze berufen .",
        "Viele Touristen besuchen jedes Jahr {LOC} .",
        "Wann spielt {PER} wieder für {ORG} ?",
        "{PER} , Sprecherin von {ORG} , wollte sich nicht äußern .",
        "Die Route führt über {LOC} und {LOC2} bis an die Küste .",
        "Seit Jahren kauft {ORG} Teile aus {LOC} .",
    ],
    "fr": [
        "{PER} a prononcé lundi un discours à {LOC} .",
        "Selon {ORG} , les prix continuent d' augmenter à {LOC} .",
        "{PER} quitte {ORG} pour rejoindre {ORG2} cet été .",
        "Le train entre {LOC} et {LOC2} avait deux heures de retard .",
        "{ORG} ouvre une nouvelle usine près de {LOC} .",
        "Hier , {PER} a rencontré {PER2} pour discuter du budget .",
        "Les chercheurs de {ORG} ont présenté une nouvelle méthode .",
        "Il pleut toute la journée à {LOC} .",
        "{PER} habite à {LOC} depuis de nombreuses années .",
        "Le concert de {PER} à {LOC} affichait complet .",
        "Nous partons en vacances au bord de la mer pour lire .",
        "Après le match contre {ORG} , {PER} a félicité l' équipe .",
        "Le conseil d' administration de {ORG} a placé {PER} à sa tête .",
        "Chaque année , de nombreux touristes visitent {LOC} .",
        "Quand {PER} jouera -t-il de nouveau pour {ORG} ?",
        "{PER} , porte-parole de {ORG} , n' a pas souhaité commenter .",
        "L' itinéraire passe par {LOC} et {LOC2} jusqu' à la côte .",
        "Depuis des années , {ORG} achète des pièces à {LOC} .",
    ],
    "it": [
        "{PER} ha tenuto lunedì un discorso a {LOC} .",
        "Secondo {ORG} i prezzi continuano a salire a {LOC} .",
        "{PER} lascia {ORG} per passare a {ORG2} in estate .",
        "Il treno da {LOC} a {LOC2} aveva due ore di ritardo .",
        "{ORG} apre un nuovo stabilimento vicino a {LOC} .",
        "Ieri {PER} ha incontrato {PER2} per parlare del bilancio .",
        "I ricercatori di {ORG} hanno presentato un nuovo metodo .",
        "A {LOC} piove tutto il giorno .",
        "{PER} vive da molti anni a {LOC} .",
        "Il concerto di {PER} a {LOC} è tutto esaurito .",
        "In vacanza andiamo al mare e leggiamo molto .",
        "Dopo la partita contro {ORG} , {PER} ha lodato la squadra .",
        "Il consiglio di amministrazione di {ORG} ha messo {PER} alla guida del gruppo .",
        "Ogni anno molti turisti visitano {LOC} .",
        "Quando tornerà {PER} a giocare con {ORG} ?",
        "{PER} , portavoce di {ORG} , non ha voluto commentare .",
        "Il percorso passa per {LOC} e {LOC2} fino alla costa .",
        "Da anni {ORG} compra componenti a {LOC} .",
    ],
    "en": [
        "{PER} gave a speech in {LOC} on Monday .",
        "According to {ORG} , prices in {LOC} keep rising .",
        "{PER} is leaving {ORG} to join {ORG2} this summer .",
        "The train from {LOC} to {LOC2} was two hours late .",
        "{ORG} is opening a new factory near {LOC} .",
        "Yesterday {PER} met {PER2} to discuss the budget .",
        "Researchers at {ORG} have presented a new method .",
        "It is raining all day in {LOC} .",
        "{PER} has lived in {LOC} for many years .",
        "The concert by {PER} in {LOC} was sold out .",
        "We are going to the seaside on holiday to read a lot .",
        "After the match against {ORG} , {PER} praised the team .",
        "The board of {ORG} has appointed {PER} as chief executive .",
        "Every year many tourists visit {LOC} .",
        "When will {PER} play for {ORG} again ?",
        "{PER} , a spokeswoman for {ORG} , declined to comment .",
        "The route runs through {LOC} and {LOC2} to the coast .",
        "For years {ORG} has bought parts from {LOC} .",
    ],
}


def parse_bracketed(line: str) -> tuple[list[str], list[str]]:
    """`[PER Angela Merkel] besuchte [LOC Rom] .` -> words and BIO tags (one per word)."""
    tokens, tags, open_type, first = [], [], None, False
    for piece in line.split():
        if piece.startswith("[") and piece[1:] in TYPES:
            if open_type:
                raise ValueError(f"nested entity in {line!r}")
            open_type, first = piece[1:], True
            continue
        closes = open_type is not None and piece.endswith("]") and len(piece) > 1
        word = piece[:-1] if closes else piece
        tokens.append(word)
        tags.append("O" if open_type is None else ("B-" if first else "I-") + open_type)
        first = False
        if closes:
            open_type = None
    if open_type is not None or any("[" in t or "]" in t for t in tokens):
        raise ValueError(f"unbalanced brackets in {line!r}")
    return tokens, tags


def _fill(template: str, names: dict, rng: random.Random) -> str:
    """A template with each slot replaced by a bracketed name (two slots of a type get two names)."""
    out = template
    for type_ in TYPES:
        picks = rng.sample(names[type_], 2)
        out = out.replace("{" + type_ + "2}", f"[{type_} {picks[1]}]").replace("{" + type_ + "}", f"[{type_} {picks[0]}]")
    return out


def _templated(lang: str, avoid: set[str]) -> dict[str, list[str]]:
    """Distinct filled templates for train and validation, none in `avoid` nor in both splits."""
    rng = random.Random(f"{SEED}-{lang}")
    seen, out = set(avoid), {}
    for split in ("validation", "train"):
        lines: list[str] = []
        while len(lines) < TEMPLATE_COUNTS[split]:
            line = _fill(rng.choice(TEMPLATES[lang]), NAMES[lang], rng)
            if line not in seen:
                seen.add(line)
                lines.append(line)
        out[split] = lines
    return out


def _source(lang: str, split: str) -> list[str]:
    path = DATA_DIR / "sources" / f"{lang}-{split}.txt"
    if not path.exists():
        return []
    return [l.strip() for l in path.read_text(encoding="utf-8").splitlines() if l.strip() and not l.startswith("#")]


def make() -> dict[str, list[dict]]:
    """Every file's rows: {"<split>-<lang>": [{"tokens", "tags", "lang", "source"}]}."""
    files = {}
    for lang in LANGUAGES:
        written = {split: _source(lang, split) for split in SPLITS}
        made = _templated(lang, set(written["train"]) | set(written["test"]))
        rng = random.Random(f"{SEED}-order-{lang}")
        for split in SPLITS:
            lines = [(l, "hand-written") for l in written[split]] + [(l, "template") for l in made.get(split, [])]
            rng.shuffle(lines)
            files[f"{split}-{lang}"] = [dict(zip(("tokens", "tags"), parse_bracketed(l)), lang=lang, source=s)
                                        for l, s in lines]
    return files


def write(directory: Path = DATA_DIR) -> dict[str, int]:
    out = {}
    for name, rows in make().items():
        (directory / f"{name}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                                 encoding="utf-8")
        out[name] = len(rows)
    return out


if __name__ == "__main__":
    for name, n in write().items():
        print(f"{name}: {n} sentences")


def load(lang: str, split: str, directory: Path = DATA_DIR) -> list:
    """One language's split as `ner_data.Sentence`s."""
    from backend.engines.ner import data as ner_data

    return ner_data.read_jsonl(directory / f"{split}-{lang}.jsonl")


def labels() -> list[str]:
    """`O`, then B-/I- for PER, ORG, LOC: the label order of every model trained on this set."""
    from backend.engines.ner import data as ner_data

    return ner_data.bio_labels(TYPES)


def files(directory: Path = DATA_DIR) -> list[Path]:
    return [directory / f"{split}-{lang}.jsonl" for lang in LANGUAGES for split in SPLITS]
