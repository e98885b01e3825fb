"""Write data/stories/stories.txt: short children's stories from a small grammar, seeded.

    python3 data/stories/make_stories.py

The text is this script's own (CC0, like the script): simple stories in the manner of
TinyStories, small and regular enough for a decoder of a few tens of thousands of parameters
to learn to write readable sentences. One story a paragraph, paragraphs separated by a blank
line; the same file every run (random.Random(36)).
"""

import random
from pathlib import Path

NAMES = ["Tom", "Lily", "Ben", "Mia", "Sam", "Anna", "Max", "Lucy", "Tim", "Sue"]
ANIMALS = ["cat", "dog", "bird", "fox", "frog", "bear", "duck", "rabbit", "mouse", "fish"]
PLACES = ["the park", "the garden", "the forest", "the beach", "the house", "the river",
          "the hill", "the farm"]
THINGS = ["ball", "kite", "box", "hat", "cake", "flower", "book", "boat", "toy", "shell"]
COLOURS = ["red", "blue", "green", "yellow", "big", "little", "shiny", "soft"]
FEELINGS = ["happy", "sad", "scared", "tired", "hungry", "excited"]
KIND = ["little", "kind", "happy", "brave"]
VERBS = ["play", "run", "jump", "sing", "dance", "swim", "read", "draw"]


def story(rng):
    name, friend = rng.sample(NAMES, 2)
    animal, place, thing = rng.choice(ANIMALS), rng.choice(PLACES), rng.choice(THINGS)
    colour, feeling, verb = rng.choice(COLOURS), rng.choice(FEELINGS), rng.choice(VERBS)
    he = "he" if name in ("Tom", "Ben", "Sam", "Max", "Tim") else "she"
    his = "his" if he == "he" else "her"
    first = rng.choice([
        "Once upon a time, there was a little %s named %s." % (animal, name),
        "Once upon a time, there was a %s girl named %s." % (rng.choice(KIND), name)
        if he == "she" else "Once upon a time, there was a little boy named %s." % name,
        "One day, %s went to %s." % (name, place),
    ])
    middle = [
        "%s liked to %s in %s." % (name, verb, place),
        "One day, %s found a %s %s." % (name, colour, thing),
        "%s was very %s." % (name, feeling),
        "%s saw %s and said, \"Look at my %s!\"" % (name, friend, thing),
        "%s smiled and said, \"Can I %s with you?\"" % (friend, verb),
        "They played with the %s all day." % thing,
        "Then the %s fell into %s." % (thing, rng.choice(PLACES)),
        "%s was %s, but %s helped %s." % (name, rng.choice(FEELINGS), friend,
                                         "him" if he == "he" else "her"),
        "%s hugged %s %s friend." % (name, his, rng.choice(["best", "new", "little"])),
    ]
    rng.shuffle(middle)
    end = rng.choice([
        "From that day on, %s and %s were best friends." % (name, friend),
        "%s went home and was very happy." % name,
        "The end.",
        "%s learned to share, and everyone was happy." % name,
    ])
    return " ".join([first] + middle[:rng.randint(3, 5)] + [end])


def main(count=1500):
    rng = random.Random(36)
    text = "\n\n".join(story(rng) for _ in range(count)) + "\n"
    out = Path(__file__).resolve().parent / "stories.txt"
    out.write_text(text)
    print("wrote %s: %d stories, %d bytes" % (out, count, len(text)))


if __name__ == "__main__":
    main()
