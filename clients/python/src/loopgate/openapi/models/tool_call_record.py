from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.tool_call_record_error_type_0 import ToolCallRecordErrorType0





T = TypeVar("T", bound="ToolCallRecord")



@_attrs_define
class ToolCallRecord:
    """ 
        Attributes:
            agent_id (str):
            created_at (datetime.datetime):
            id (str): `call_…`
            name (str):
            status (str): `running`, `succeeded` or `failed`.
            error (None | ToolCallRecordErrorType0 | Unset): The problem document, once failed.
            finished_at (datetime.datetime | None | Unset):
            result (Any | Unset): What entered the conversation (any JSON), once succeeded.
     """

    agent_id: str
    created_at: datetime.datetime
    id: str
    name: str
    status: str
    error: None | ToolCallRecordErrorType0 | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    result: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_record_error_type_0 import ToolCallRecordErrorType0 # noqa: PLC0415
        agent_id = self.agent_id

        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        status = self.status

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, ToolCallRecordErrorType0):
            error = self.error.to_dict()
        else:
            error = self.error

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        result = self.result


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "created_at": created_at,
            "id": id,
            "name": name,
            "status": status,
        })
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if result is not UNSET:
            field_dict["result"] = result

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_call_record_error_type_0 import ToolCallRecordErrorType0 # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        name = d.pop("name")

        status = d.pop("status")

        def _parse_error(data: object) -> None | ToolCallRecordErrorType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = ToolCallRecordErrorType0.from_dict(data)



                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolCallRecordErrorType0 | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)



                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))


        result = d.pop("result", UNSET)

        tool_call_record = cls(
            agent_id=agent_id,
            created_at=created_at,
            id=id,
            name=name,
            status=status,
            error=error,
            finished_at=finished_at,
            result=result,
        )


        tool_call_record.additional_properties = d
        return tool_call_record

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
