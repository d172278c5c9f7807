from enum import StrEnum

class Scope(StrEnum):
    MINT = "mint"
    RUNTIME = "runtime"
    STUDIO = "studio"

    def __str__(self) -> str:
        return str(self.value)
