from enum import StrEnum

class ConnectionInputType0Type(StrEnum):
    OAUTH2 = "oauth2"

    def __str__(self) -> str:
        return str(self.value)
