from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_call_input_arguments_filter_type_0_item import ToolCallInputArgumentsFilterType0Item
  from ..models.tool_call_input_arguments_filter_type_1 import ToolCallInputArgumentsFilterType1
  from ..models.tool_call_input_arguments_for_each import ToolCallInputArgumentsForEach





T = TypeVar("T", bound="ToolCallInputArguments")



@_attrs_define
class ToolCallInputArguments:
    """ The tool's own arguments (its `input_schema`), plus the reserved arguments below on a binding with `loop_responses:
    true` (LOOP_ENGINE L2). Reserved arguments are read by loopgate and never sent upstream (L3). A call that uses any
    of them answers the envelope `{items, _itemCount, _pagingComplete, _likelyMoreRows, _total?, _stoppedBy?, _note,
    _resultId, _continue?, _unmatchedFields?, _forEachErrors?, _cache?}`.

        Attributes:
            field_all_pages (bool | Unset): true: walk every page inside this one call and merge the rows (P1–P5), within 20
                pages per collection, 60 requests, 5,000 items, 24 MB and 60 s (`_stoppedBy` names the first bound hit). On a
                tool where no pagination was detected it is `400 all_pages_unsupported` (P6).
            field_continue_ (str | Unset): The `_continue` of an earlier result of this tool that stopped at a bound:
                fetches the rest under a fresh budget and grows the same `_resultId` (P10). Pass it with the same arguments.
            field_fields (list[str] | Unset): Keep only these dot-paths of every row, e.g. `["id", "customer.name",
                "lines.sku"]` (F1); paths that matched no row are reported in `_unmatchedFields` (F4). The full rows stay stored
                under `_resultId` (F3).
            field_filter_ (list[ToolCallInputArgumentsFilterType0Item] | ToolCallInputArgumentsFilterType1 | Unset): Clauses
                ANDed over the merged rows, applied after the walk and the fan-out and before `_fields` (R1–R2); at most 20.
                Honoured on every looping binding, though not advertised to the model.
            field_for_each (ToolCallInputArgumentsForEach | Unset): Call the tool once per value of its parameter `key` and
                merge the rows, each tagged with its value (E1); at most 50 distinct values (E2); a `key` that is not a
                parameter is `400 invalid_for_each_key` (E3); per-value failures go to `_forEachErrors` (E4).
            field_refresh (bool | Unset): true: bypass the cache of complete walks and replace its entry with fresh data
                (C4).
     """

    field_all_pages: bool | Unset = UNSET
    field_continue_: str | Unset = UNSET
    field_fields: list[str] | Unset = UNSET
    field_filter_: list[ToolCallInputArgumentsFilterType0Item] | ToolCallInputArgumentsFilterType1 | Unset = UNSET
    field_for_each: ToolCallInputArgumentsForEach | Unset = UNSET
    field_refresh: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_input_arguments_filter_type_0_item import ToolCallInputArgumentsFilterType0Item # noqa: PLC0415
        from ..models.tool_call_input_arguments_filter_type_1 import ToolCallInputArgumentsFilterType1 # noqa: PLC0415
        from ..models.tool_call_input_arguments_for_each import ToolCallInputArgumentsForEach # noqa: PLC0415
        field_all_pages = self.field_all_pages

        field_continue_ = self.field_continue_

        field_fields: list[str] | Unset = UNSET
        if not isinstance(self.field_fields, Unset):
            field_fields = self.field_fields



        field_filter_: dict[str, Any] | list[dict[str, Any]] | Unset
        if isinstance(self.field_filter_, Unset):
            field_filter_ = UNSET
        elif isinstance(self.field_filter_, list):
            field_filter_ = []
            for field_filter_type_0_item_data in self.field_filter_:
                field_filter_type_0_item = field_filter_type_0_item_data.to_dict()
                field_filter_.append(field_filter_type_0_item)


        else:
            field_filter_ = self.field_filter_.to_dict()


        field_for_each: dict[str, Any] | Unset = UNSET
        if not isinstance(self.field_for_each, Unset):
            field_for_each = self.field_for_each.to_dict()

        field_refresh = self.field_refresh


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if field_all_pages is not UNSET:
            field_dict["_all_pages"] = field_all_pages
        if field_continue_ is not UNSET:
            field_dict["_continue"] = field_continue_
        if field_fields is not UNSET:
            field_dict["_fields"] = field_fields
        if field_filter_ is not UNSET:
            field_dict["_filter"] = field_filter_
        if field_for_each is not UNSET:
            field_dict["_for_each"] = field_for_each
        if field_refresh is not UNSET:
            field_dict["_refresh"] = field_refresh

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_call_input_arguments_filter_type_0_item import ToolCallInputArgumentsFilterType0Item # noqa: PLC0415
        from ..models.tool_call_input_arguments_filter_type_1 import ToolCallInputArgumentsFilterType1 # noqa: PLC0415
        from ..models.tool_call_input_arguments_for_each import ToolCallInputArgumentsForEach # noqa: PLC0415
        d = dict(src_dict)
        field_all_pages = d.pop("_all_pages", UNSET)

        field_continue_ = d.pop("_continue", UNSET)

        field_fields = cast(list[str], d.pop("_fields", UNSET))


        def _parse_field_filter_(data: object) -> list[ToolCallInputArgumentsFilterType0Item] | ToolCallInputArgumentsFilterType1 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                field_filter_type_0 = []
                _field_filter_type_0 = data
                for field_filter_type_0_item_data in (_field_filter_type_0):
                    field_filter_type_0_item = ToolCallInputArgumentsFilterType0Item.from_dict(field_filter_type_0_item_data)



                    field_filter_type_0.append(field_filter_type_0_item)

                return field_filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            field_filter_type_1 = ToolCallInputArgumentsFilterType1.from_dict(data)



            return field_filter_type_1

        field_filter_ = _parse_field_filter_(d.pop("_filter", UNSET))


        _field_for_each = d.pop("_for_each", UNSET)
        field_for_each: ToolCallInputArgumentsForEach | Unset
        if isinstance(_field_for_each,  Unset):
            field_for_each = UNSET
        else:
            field_for_each = ToolCallInputArgumentsForEach.from_dict(_field_for_each)




        field_refresh = d.pop("_refresh", UNSET)

        tool_call_input_arguments = cls(
            field_all_pages=field_all_pages,
            field_continue_=field_continue_,
            field_fields=field_fields,
            field_filter_=field_filter_,
            field_for_each=field_for_each,
            field_refresh=field_refresh,
        )


        tool_call_input_arguments.additional_properties = d
        return tool_call_input_arguments

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
