from enum import StrEnum

class AuthType(StrEnum):
    BEARER = "bearer"
    HEADER = "header"
    NONE = "none"
    QUERY = "query"

    def __str__(self) -> str:
        return str(self.value)
