from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tool_kind import ToolKind
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.list_response_tool_data_item_input_schema import ListResponseToolDataItemInputSchema





T = TypeVar("T", bound="ListResponseToolDataItem")



@_attrs_define
class ListResponseToolDataItem:
    """ 
        Attributes:
            created_at (datetime.datetime):
            description (str):
            id (str): `tool_…`
            input_schema (ListResponseToolDataItemInputSchema): JSON Schema object: path/query/header parameters at the top
                level, a JSON body under `body`.
            kind (ToolKind):
            method (str):
            name (str):
            path (str):
            provider_id (str):
            updated_at (datetime.datetime):
            toolkit (None | str | Unset):
     """

    created_at: datetime.datetime
    description: str
    id: str
    input_schema: ListResponseToolDataItemInputSchema
    kind: ToolKind
    method: str
    name: str
    path: str
    provider_id: str
    updated_at: datetime.datetime
    toolkit: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.list_response_tool_data_item_input_schema import ListResponseToolDataItemInputSchema # noqa: PLC0415
        created_at = self.created_at.isoformat()

        description = self.description

        id = self.id

        input_schema = self.input_schema.to_dict()

        kind = self.kind.value

        method = self.method

        name = self.name

        path = self.path

        provider_id = self.provider_id

        updated_at = self.updated_at.isoformat()

        toolkit: None | str | Unset
        if isinstance(self.toolkit, Unset):
            toolkit = UNSET
        else:
            toolkit = self.toolkit


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "created_at": created_at,
            "description": description,
            "id": id,
            "input_schema": input_schema,
            "kind": kind,
            "method": method,
            "name": name,
            "path": path,
            "provider_id": provider_id,
            "updated_at": updated_at,
        })
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.list_response_tool_data_item_input_schema import ListResponseToolDataItemInputSchema # noqa: PLC0415
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        description = d.pop("description")

        id = d.pop("id")

        input_schema = ListResponseToolDataItemInputSchema.from_dict(d.pop("input_schema"))




        kind = ToolKind(d.pop("kind"))




        method = d.pop("method")

        name = d.pop("name")

        path = d.pop("path")

        provider_id = d.pop("provider_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        def _parse_toolkit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolkit = _parse_toolkit(d.pop("toolkit", UNSET))


        list_response_tool_data_item = cls(
            created_at=created_at,
            description=description,
            id=id,
            input_schema=input_schema,
            kind=kind,
            method=method,
            name=name,
            path=path,
            provider_id=provider_id,
            updated_at=updated_at,
            toolkit=toolkit,
        )


        list_response_tool_data_item.additional_properties = d
        return list_response_tool_data_item

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
