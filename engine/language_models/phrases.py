"""Short review phrases with a sentiment label, written for this project: what the Embeddings
tab embeds, projects and colours. Each class has the same number of phrases; the neutral ones
describe without judging."""
from __future__ import annotations

POSITIVE = (
    "an absolute delight from start to finish",
    "the best meal I have had in years",
    "warm, friendly staff and a lovely room",
    "I would happily buy it again",
    "a wonderful film that made me smile",
    "works perfectly and arrived early",
    "beautifully written and hard to put down",
    "great value, I am very pleased",
    "the concert was pure joy",
    "such a charming little cafe",
    "brilliant service, thank you so much",
    "my kids loved every minute of it",
    "a fantastic holiday we will never forget",
    "the new update is a real improvement",
    "comfortable, quiet and spotless",
    "highly recommended to everyone",
)
NEGATIVE = (
    "a complete waste of money",
    "the worst service I have ever had",
    "rude staff and a dirty room",
    "it broke after two days",
    "a boring film that dragged on forever",
    "arrived late and damaged",
    "badly written and impossible to finish",
    "overpriced and disappointing",
    "the concert was a painful mess",
    "cold food and a long wait",
    "I regret buying this",
    "my kids hated it",
    "a miserable trip full of problems",
    "the new update ruined everything",
    "noisy, cramped and smelly",
    "avoid this place at all costs",
)
NEUTRAL = (
    "the package contains two cables",
    "the shop opens at nine on weekdays",
    "the room is on the third floor",
    "it comes in blue and grey",
    "the film is about two hours long",
    "delivery takes three to five days",
    "the book has twelve chapters",
    "the price includes tax",
    "the concert starts at eight",
    "the cafe is next to the station",
    "the manual is printed in English",
    "the tickets were bought online",
    "the hotel has a car park",
    "the update was released on Tuesday",
    "the table seats four people",
    "the order number is on the receipt",
)
LABELS = ("positive", "negative", "neutral")
PHRASES = {"positive": POSITIVE, "negative": NEGATIVE, "neutral": NEUTRAL}


def labelled() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(phrases, labels), positive then negative then neutral."""
    texts = tuple(t for k in LABELS for t in PHRASES[k])
    return texts, tuple(k for k in LABELS for _ in PHRASES[k])
