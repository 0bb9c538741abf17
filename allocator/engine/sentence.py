"""The engine's sentences: English text that carries what it is made of, for the wording layer.

Its own small module: the pools, the pod groups and the workloads write sentences for every
scenario, and the explanation (which imports the trace) is needed only when a run asks for one."""


class Sentence(str):
    """A sentence the engine writes in English, with what it is made of: `form` names its shape and
    `parts` hold its values (names, counts, the why rows it quotes), so a wording layer can say the
    same in another language without taking the English apart. It is a `str`, so the JSON, the CLI
    and every comparison see the English text."""

    def __new__(cls, text: str = "", form: str = "", **parts):
        sentence = super().__new__(cls, text)
        sentence.form = form
        sentence.parts = parts
        return sentence
