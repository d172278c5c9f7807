from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tool_kind import ToolKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_input_input_schema import ToolInputInputSchema





T = TypeVar("T", bound="ToolInput")



@_attrs_define
class ToolInput:
    """ 
        Attributes:
            input_schema (ToolInputInputSchema):
            method (str):
            name (str): `[A-Za-z0-9_-]{1,64}`, unique per provider.
            path (str): Path template below the provider's base URL, e.g. `/repos/{owner}/{repo}/issues`.
            provider_id (str):
            description (str | Unset):
            kind (None | ToolKind | Unset):
            toolkit (None | str | Unset):
     """

    input_schema: ToolInputInputSchema
    method: str
    name: str
    path: str
    provider_id: str
    description: str | Unset = UNSET
    kind: None | ToolKind | Unset = UNSET
    toolkit: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_input_input_schema import ToolInputInputSchema # noqa: PLC0415
        input_schema = self.input_schema.to_dict()

        method = self.method

        name = self.name

        path = self.path

        provider_id = self.provider_id

        description = self.description

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        elif isinstance(self.kind, ToolKind):
            kind = self.kind.value
        else:
            kind = self.kind

        toolkit: None | str | Unset
        if isinstance(self.toolkit, Unset):
            toolkit = UNSET
        else:
            toolkit = self.toolkit


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "input_schema": input_schema,
            "method": method,
            "name": name,
            "path": path,
            "provider_id": provider_id,
        })
        if description is not UNSET:
            field_dict["description"] = description
        if kind is not UNSET:
            field_dict["kind"] = kind
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_input_input_schema import ToolInputInputSchema # noqa: PLC0415
        d = dict(src_dict)
        input_schema = ToolInputInputSchema.from_dict(d.pop("input_schema"))




        method = d.pop("method")

        name = d.pop("name")

        path = d.pop("path")

        provider_id = d.pop("provider_id")

        description = d.pop("description", UNSET)

        def _parse_kind(data: object) -> None | ToolKind | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                kind_type_0 = ToolKind(data)



                return kind_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolKind | Unset, data)

        kind = _parse_kind(d.pop("kind", UNSET))


        def _parse_toolkit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolkit = _parse_toolkit(d.pop("toolkit", UNSET))


        tool_input = cls(
            input_schema=input_schema,
            method=method,
            name=name,
            path=path,
            provider_id=provider_id,
            description=description,
            kind=kind,
            toolkit=toolkit,
        )

        return tool_input

