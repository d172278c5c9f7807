from enum import StrEnum

class ToolCallInputArgumentsFilterType0ItemOp(StrEnum):
    CONTAINS = "contains"
    EQ = "eq"
    EXISTS = "exists"
    GT = "gt"
    GTE = "gte"
    IN = "in"
    LT = "lt"
    LTE = "lte"
    NEQ = "neq"

    def __str__(self) -> str:
        return str(self.value)
