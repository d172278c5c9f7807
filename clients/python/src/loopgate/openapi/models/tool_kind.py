from enum import StrEnum

class ToolKind(StrEnum):
    API = "api"
    APP = "app"
    MCP = "mcp"

    def __str__(self) -> str:
        return str(self.value)
