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
  from ..models.tool_patch_input_schema_type_0 import ToolPatchInputSchemaType0





T = TypeVar("T", bound="ToolPatch")



@_attrs_define
class ToolPatch:
    """ 
        Attributes:
            description (None | str | Unset):
            input_schema (None | ToolPatchInputSchemaType0 | Unset):
            kind (None | ToolKind | Unset):
            method (None | str | Unset):
            name (None | str | Unset):
            path (None | str | Unset):
            toolkit (None | str | Unset):
     """

    description: None | str | Unset = UNSET
    input_schema: None | ToolPatchInputSchemaType0 | Unset = UNSET
    kind: None | ToolKind | Unset = UNSET
    method: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    path: None | str | Unset = UNSET
    toolkit: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_patch_input_schema_type_0 import ToolPatchInputSchemaType0 # noqa: PLC0415
        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        input_schema: dict[str, Any] | None | Unset
        if isinstance(self.input_schema, Unset):
            input_schema = UNSET
        elif isinstance(self.input_schema, ToolPatchInputSchemaType0):
            input_schema = self.input_schema.to_dict()
        else:
            input_schema = self.input_schema

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        elif isinstance(self.kind, ToolKind):
            kind = self.kind.value
        else:
            kind = self.kind

        method: None | str | Unset
        if isinstance(self.method, Unset):
            method = UNSET
        else:
            method = self.method

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path

        toolkit: None | str | Unset
        if isinstance(self.toolkit, Unset):
            toolkit = UNSET
        else:
            toolkit = self.toolkit


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if description is not UNSET:
            field_dict["description"] = description
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if kind is not UNSET:
            field_dict["kind"] = kind
        if method is not UNSET:
            field_dict["method"] = method
        if name is not UNSET:
            field_dict["name"] = name
        if path is not UNSET:
            field_dict["path"] = path
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_patch_input_schema_type_0 import ToolPatchInputSchemaType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))


        def _parse_input_schema(data: object) -> None | ToolPatchInputSchemaType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_schema_type_0 = ToolPatchInputSchemaType0.from_dict(data)



                return input_schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolPatchInputSchemaType0 | Unset, data)

        input_schema = _parse_input_schema(d.pop("input_schema", UNSET))


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


        def _parse_method(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        method = _parse_method(d.pop("method", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        path = _parse_path(d.pop("path", UNSET))


        def _parse_toolkit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolkit = _parse_toolkit(d.pop("toolkit", UNSET))


        tool_patch = cls(
            description=description,
            input_schema=input_schema,
            kind=kind,
            method=method,
            name=name,
            path=path,
            toolkit=toolkit,
        )

        return tool_patch

