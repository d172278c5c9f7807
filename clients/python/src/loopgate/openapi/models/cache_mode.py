from enum import StrEnum

class CacheMode(StrEnum):
    OFF = "off"
    ON = "on"
    SHADOW = "shadow"

    def __str__(self) -> str:
        return str(self.value)
