from enum import StrEnum

class Overlap(StrEnum):
    ALLOW = "allow"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
