"""A seeded corpus of agent memories with known answers: paraphrased facts about people,
memories naming identifiers (order, SKU, ticket and invoice codes, emails, versions, quantities
with units, URLs) among many look-alikes, and filler; each memory has a user and metadata.

Each agent's memories come from a generator of their own, so the first n memories of an agent
are the same whatever the corpus size: a 10k corpus is a prefix of the 100k one per agent, and
their embeddings are shared.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

NAMES = (
    "Ana Ben Carla Dmitri Elena Farid Greta Hiro Ines Jonas Kemal Lena Marco Nadia Omar Paula "
    "Quentin Rosa Sven Tara Umar Vera Wim Xenia Yusuf Zoe Aiko Bruno Chidi Dana Emil Fatima "
    "Goran Hanna Ivan Julia Kofi Liam Mei Nils Olga Pedro Rania Sami Tomas Ulla Viktor Wanda "
    "Yara Zeno Agnes Boris Celia Diego Edith Felix Gemma Hugo Ilse Jakob"
).split()
CITIES = tuple(
    (
        "Lisbon Oslo Porto Lyon Gdansk Bilbao Turin Ghent Tallinn Krakow Seville Utrecht Bergen "
        "Valencia Bremen Malmo Zagreb Riga Aarhus Leipzig"
    ).split()
)
COMPANIES = "Acme Globex Initech Umbrella Hooli Vandelay Soylent Wonka Stark Tyrell".split()
USERS = ("user-1", "user-2", "user-3", "user-4")
CHANNELS = ("email", "chat", "phone", "meeting")

# (memory, question): {who}/{whose} name the person (a name in a paraphrase query, "the user"
# in a scoped one); other fields are filled from SLOTS. The question shares the person and
# little else with the memory.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("{who} is allergic to {food} and checks every restaurant menu.",
     "which food makes {who} ill?"),
    ("{who} books an aisle seat on flights longer than {hours} hours.",
     "where does {who} like to sit on a long trip by plane?"),
    ("{whose} daughter plays the {instrument} in the school orchestra.",
     "what music does {whose} child perform?"),
    ("{who} runs a half marathon every spring in {city}.",
     "which race does {who} take part in each year?"),
    ("{who} dislikes meetings before 10 am and keeps mornings for focused work.",
     "when should I avoid booking calls with {who}?"),
    ("{who} is learning {language} before moving to {city} next year.",
     "why is {who} studying a foreign language?"),
    ("{who} drives a {car} and charges it in the office garage.",
     "what vehicle does {who} own?"),
    ("{whose} favourite dessert is {dessert} from the corner bakery.",
     "what sweet treat does {who} love?"),
    ("{who} works remotely from {city} on Fridays.",
     "where is {who} at the end of the week?"),
    ("{who} wants invoices emailed as PDF files, never printed.",
     "how should billing documents reach {who}?"),
    ("{who} is vegetarian but eats fish on special occasions.",
     "what are {whose} eating habits?"),
    ("{who} broke an ankle skiing near {city} and uses crutches this month.",
     "why is {who} walking with support at the moment?"),
    ("{whose} birthday is in {month} and surprise parties upset {who}.",
     "when does {who} celebrate turning a year older?"),
    ("{who} takes the {time} train home and leaves early on Thursdays.",
     "how does {who} commute back in the evening?"),
    ("{who} adopted a rescue {pet} last winter.",
     "what animal lives with {who}?"),
    ("{who} is the on-call engineer for the {system} service this week.",
     "who answers pages for {system} right now?"),
    ("{who} manages the budget of the {project} project and approves each purchase.",
     "whose sign-off do {project} expenses need?"),
    ("{who} speaks fluent {language} and translates contracts for the team.",
     "who can help us with paperwork written in {language}?"),
    ("{who} is afraid of flying and takes trains for trips within Europe.",
     "how does {who} prefer to travel?"),
    ("{who} plays {sport} with colleagues every Wednesday evening.",
     "what does {who} do for exercise midweek?"),
    ("{who} is saving to buy a flat in {city} and asked about mortgage rates.",
     "what big purchase is {who} planning?"),
    ("{who} volunteers at the {city} food bank on Saturdays.",
     "where does {who} help out at weekends?"),
    ("{who} needs large-print documents because of poor eyesight.",
     "what accessibility needs does {who} have?"),
    ("{who} drinks only decaf coffee after lunch.",
     "what does {who} choose to drink in the afternoon?"),
    ("{whose} passport expires in {month}, so it must be renewed before any visa.",
     "what travel paperwork does {who} need to sort out?"),
)  # fmt: skip

SLOTS: dict[str, tuple[str, ...]] = {
    "food": ("peanuts", "shellfish", "gluten", "sesame", "kiwi", "eggs"),
    "hours": ("six", "eight", "ten", "twelve"),
    "instrument": ("violin", "cello", "flute", "trumpet", "clarinet"),
    "city": CITIES,
    "language": ("Portuguese", "Japanese", "Polish", "Dutch", "Korean", "Finnish"),
    "car": ("small hatchback", "white electric van", "hybrid estate", "vintage roadster"),
    "dessert": ("apple strudel", "lemon tart", "carrot cake", "baklava", "tiramisu"),
    "month": ("January", "March", "May", "July", "September", "November"),
    "time": ("5:40 pm", "6:15 pm", "7:05 pm", "4:50 pm"),
    "pet": ("greyhound", "tabby cat", "rabbit", "parrot"),
    "system": ("billing", "search", "payments", "checkout", "notifications", "reporting"),
    "project": ("Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon"),
    "sport": ("badminton", "five-a-side football", "squash", "volleyball", "table tennis"),
}

GOODS = ("coffee beans", "steel bolts", "olive oil", "cotton yarn", "paper rolls", "copper wire")


def _order(rng: random.Random) -> tuple[str, str, str]:
    code = f"ORD-{rng.randint(10000, 99999)}"
    event = rng.choice(
        ("was delayed at customs", "shipped from the Rotterdam hub", "came back damaged",
         "was split into two parcels", "is held until payment clears")
    )  # fmt: skip
    question = rng.choice(
        ("what happened with order {c}?", "any update on {c}?", "where is {c} now?")
    )
    return code, f"Order {code} for {rng.choice(COMPANIES)} {event}.", question.format(c=code)


def _sku(rng: random.Random) -> tuple[str, str, str]:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXZ") for _ in range(2))
    code = f"{letters}-{rng.randint(1000, 9999)}-{rng.choice(('S', 'M', 'L', 'XL'))}"
    state = rng.choice(("is out of stock", "is back in stock", "was discontinued", "is on sale"))
    question = rng.choice(("is {c} available?", "stock of {c}?", "what about SKU {c}?"))
    return code, f"SKU {code} {state} at the {rng.choice(CITIES)} store.", question.format(c=code)


def _email(rng: random.Random) -> tuple[str, str, str]:
    first, last = rng.choice(NAMES).lower(), rng.choice(NAMES).lower()
    code = f"{first}.{last}{rng.randint(1, 99)}@{rng.choice(COMPANIES).lower()}.example"
    ask = rng.choice(
        ("a call back", "removal from the newsletter", "the signed contract",
         "an invitation to the webinar")
    )  # fmt: skip
    memory = f"{code} asked for {ask} about the {rng.choice(SLOTS['project'])} rollout."
    question = rng.choice(("what did {c} ask for?", "follow-up owed to {c}?"))
    return code, memory, question.format(c=code)


def _version(rng: random.Random) -> tuple[str, str, str]:
    code = f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
    bug = rng.choice(("login", "sync", "export", "upload", "crash-on-start", "timezone"))
    product = rng.choice(("mobile", "desktop", "web", "tablet"))
    memory = f"Release {code} of the {product} app fixed the {bug} bug."
    return code, memory, rng.choice(("what changed in {c}?", "what did {c} fix?")).format(c=code)


def _ticket(rng: random.Random) -> tuple[str, str, str]:
    code = f"INC-{rng.randint(100000, 999999)}"
    outcome = rng.choice(
        ("was resolved by a restart", "was escalated to the vendor", "was closed as a duplicate",
         "was reopened by the customer")
    )  # fmt: skip
    memory = f"Ticket {code} about the {rng.choice(SLOTS['system'])} outage {outcome}."
    return code, memory, rng.choice(("status of {c}?", "how did {c} end?")).format(c=code)


def _invoice(rng: random.Random) -> tuple[str, str, str]:
    code = f"INV-2026-{rng.randint(1000, 9999)}"
    state = rng.choice(("is overdue", "was paid", "is disputed", "was credited"))
    memory = (
        f"Invoice {code} for {rng.randint(100, 9999)} EUR from {rng.choice(COMPANIES)} {state}."
    )
    return code, memory, rng.choice(("is {c} settled?", "what about invoice {c}?")).format(c=code)


def _quantity(rng: random.Random) -> tuple[str, str, str]:
    code = f"{rng.randint(11, 9999)}kg"
    goods = rng.choice(GOODS)
    arrival = rng.choice(("arrived late", "arrived early", "arrived damaged", "arrived on time"))
    memory = f"The {code} of {goods} for {rng.choice(CITIES)} {arrival}."
    return code, memory, f"how did the {code} delivery go?"


def _url(rng: random.Random) -> tuple[str, str, str]:
    system = rng.choice(SLOTS["system"])
    code = f"https://wiki.{rng.choice(COMPANIES).lower()}.example/{system}/runbook-{rng.randint(100, 9999)}"
    memory = f"The {system} runbook now lives at {code}."
    return code, memory, f"who wrote {code}?" if rng.random() < 0.2 else f"what is at {code}?"


IDENTIFIERS = (_order, _sku, _email, _version, _ticket, _invoice, _quantity, _url)
FILLER_SUBJECTS = ("the team", "the customer", "the supplier", "finance", "support", "the driver")
FILLER_EVENTS = (
    "reviewed the quarterly numbers",
    "asked about the new contract",
    "moved the weekly sync",
    "renewed the insurance",
    "reported a slow checkout",
    "praised the onboarding",
    "requested a discount",
    "cancelled the standing order",
)
FILLER_WHEN = ("on Monday", "last week", "in March", "after the release", "yesterday", "today")


UNRELATED = (
    "What is the capital of Mongolia?",
    "How do I bake sourdough bread at home?",
    "Who won the chess world championship in 1972?",
    "Explain how photosynthesis works in plants.",
    "What is the boiling point of water on Everest?",
    "Recommend a good science fiction novel.",
    "How many moons does Jupiter have?",
    "What is the difference between a violin and a viola?",
    "How do volcanoes form?",
    "Translate good morning into Swahili.",
    "What causes the northern lights?",
    "How long should I steep green tea?",
    "Which planet is the hottest in the solar system?",
    "What is a prime number?",
    "How do bees make honey?",
    "Who painted the ceiling of the Sistine Chapel?",
    "What is the tallest tree species on earth?",
    "How do I change a bicycle tyre?",
    "Why is the sky blue?",
    "What language is spoken in Brazil?",
    "How do submarines dive and surface?",
    "What is the plot of Hamlet?",
    "How are diamonds formed?",
    "What does a quantum computer do?",
    "How do I grow tomatoes on a balcony?",
    "What is the speed of sound in air?",
    "Who invented the printing press?",
    "How do migrating birds navigate?",
    "What is the largest desert in the world?",
    "How does a rainbow appear?",
    "What rhymes with orange?",
    "How do I tie a bowline knot?",
    "What is the population of Iceland?",
    "Why do cats purr?",
    "How are glaciers moving?",
    "What is the recipe for gazpacho?",
    "How does compound interest work?",
    "What is the longest river in Africa?",
    "How do octopuses change colour?",
    "What year did the Berlin Wall fall?",
)
"""Questions no memory of the corpus answers: what the floor is for."""


@dataclass
class Memory:
    """One stored memory and what recall returns about it."""

    memory_id: str
    agent: int
    content: str
    kind: str
    type: str
    user_id: str
    metadata: dict[str, Any]
    created_at: datetime
    question: str | None = None
    scoped_question: str | None = None
    identifier: str | None = None


@dataclass
class Query:
    """A question, the agent it is asked of, the memory that answers it, and a filter."""

    text: str
    agent: int
    relevant: tuple[str, ...]
    kind: str
    filter: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _paraphrase(rng: random.Random, index: int, who: str) -> tuple[str, str, str]:
    """The memory, its question naming the person, and its question about 'the user'."""
    memory, question = PARAPHRASES[index]
    slots = {name: rng.choice(values) for name, values in SLOTS.items()}

    def fill(text: str, person: str, whose: str) -> str:
        filled = text.format(who=person, whose=whose, **slots)
        return filled[0].upper() + filled[1:]

    return (
        fill(memory, who, f"{who}'s"),
        fill(question, who, f"{who}'s"),
        fill(question, "the user", "the user's"),
    )


def agent_memories(seed: int, agent: int, count: int) -> list[Memory]:
    """An agent's first `count` memories: ~30 % paraphrasable facts (one per template and
    person), ~45 % identifier memories (each code once), the rest filler."""
    rng = random.Random(f"{seed}:{agent}")
    taken: set[Any] = set()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[Memory] = []
    while len(out) < count:
        roll = rng.random()
        created = start + timedelta(minutes=rng.randint(0, 60 * 24 * 330))
        metadata = {
            "channel": rng.choice(CHANNELS),
            "priority": rng.randint(1, 5),
            "at": created.isoformat().replace("+00:00", "Z"),
        }
        common: dict[str, Any] = {
            "memory_id": f"m{agent:03d}-{len(out):05d}",
            "agent": agent,
            "user_id": rng.choice(USERS),
            "metadata": metadata,
            "created_at": created,
        }
        if roll < 0.30:
            index, who = rng.randrange(len(PARAPHRASES)), rng.choice(NAMES)
            memory, question, scoped = _paraphrase(rng, index, who)
            if (index, who) in taken:
                continue
            taken.add((index, who))
            out.append(
                Memory(
                    content=memory, kind="paraphrase", type="preference", question=question,
                    scoped_question=scoped, **common,
                )
            )  # fmt: skip
        elif roll < 0.75:
            code, memory, question = rng.choice(IDENTIFIERS)(rng)
            if code.lower() in taken:
                continue
            taken.add(code.lower())
            out.append(
                Memory(
                    content=memory, kind="identifier", type="event", question=question,
                    identifier=code, **common,
                )
            )  # fmt: skip
        else:
            text = (
                f"{rng.choice(FILLER_SUBJECTS).capitalize()} {rng.choice(FILLER_EVENTS)} "
                f"{rng.choice(FILLER_WHEN)}."
            )
            if text in taken:
                continue
            taken.add(text)
            out.append(Memory(content=text, kind="filler", type="conversation", **common))
    return out


def corpus(seed: int, agents: int, per_agent: int) -> list[Memory]:
    """Every agent's first `per_agent` memories."""
    return [m for agent in range(agents) for m in agent_memories(seed, agent, per_agent)]


def _filter_for(memory: Memory, variant: int, rng: random.Random) -> dict[str, Any]:
    """A filter the memory satisfies: its user, its user and channel, a priority floor, a time
    window around it, or its user and a set of channels."""
    meta = memory.metadata
    if variant == 0:
        return {"user_id": memory.user_id}
    if variant == 1:
        return {"user_id": memory.user_id, "metadata": {"channel": meta["channel"]}}
    if variant == 2:
        return {"metadata": {"priority": {"gte": meta["priority"]}}}
    if variant == 3:
        low = memory.created_at - timedelta(days=rng.randint(5, 40))
        high = memory.created_at + timedelta(days=rng.randint(5, 40))
        return {"metadata": {"at": {"gte": low.isoformat(), "lte": high.isoformat()}}}
    others = [c for c in CHANNELS if c != meta["channel"]]
    return {
        "user_id": memory.user_id,
        "metadata": {"channel": {"in": [meta["channel"], rng.choice(others)]}},
    }


def queries(memories: list[Memory], seed: int, per_kind: int, filtered: int) -> list[Query]:
    """`per_kind` paraphrase and identifier questions and `filtered` scoped questions, each
    about a different memory; a scoped question asks about "the user" with a filter its memory
    satisfies (the same words without the filter are its unfiltered twin); and the questions no
    memory answers, each asked of some agent."""
    rng = random.Random(f"queries:{seed}:{len(memories)}")
    agents = max(m.agent for m in memories) + 1
    paraphrases = [m for m in memories if m.kind == "paraphrase"]
    identifiers = [m for m in memories if m.kind == "identifier"]
    asked = rng.sample(paraphrases, per_kind + filtered)
    out = [Query(m.question or "", m.agent, (m.memory_id,), "paraphrase") for m in asked[:per_kind]]
    out += [
        Query(m.question or "", m.agent, (m.memory_id,), "identifier", extra={"code": m.identifier})
        for m in rng.sample(identifiers, per_kind)
    ]
    out += [Query(text, rng.randrange(agents), (), "unrelated") for text in UNRELATED]
    for n, memory in enumerate(asked[per_kind:]):
        out.append(
            Query(
                memory.scoped_question or "",
                memory.agent,
                (memory.memory_id,),
                "filtered",
                filter=_filter_for(memory, n % 5, rng),
            )
        )
    return out


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def satisfies(result: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a recall result meets a filter made by `_filter_for` (to count violations)."""
    if "user_id" in wanted and result.get("user_id") != wanted["user_id"]:
        return False
    metadata = result.get("metadata") or {}
    for key, condition in (wanted.get("metadata") or {}).items():
        value = metadata.get(key)
        if not isinstance(condition, dict):
            condition = {"eq": condition}
        for op, bound in condition.items():
            if value is None:
                return False
            if op == "eq" and value != bound:
                return False
            if op == "in" and value not in bound:
                return False
            if op in ("gte", "lte"):
                left, right = (
                    (_instant(value), _instant(bound)) if isinstance(bound, str) else (value, bound)
                )
                if (op == "gte" and left < right) or (op == "lte" and left > right):
                    return False
    return True
