from enum import StrEnum

class ConnectionInputType1Type(StrEnum):
    API_KEY = "api_key"

    def __str__(self) -> str:
        return str(self.value)
