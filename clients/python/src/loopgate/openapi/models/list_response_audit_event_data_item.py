from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.actor import Actor
  from ..models.list_response_audit_event_data_item_changes import ListResponseAuditEventDataItemChanges
  from ..models.resource import Resource





T = TypeVar("T", bound="ListResponseAuditEventDataItem")



@_attrs_define
class ListResponseAuditEventDataItem:
    """ One write, as listed by `GET /v1/audit-events`.

        Attributes:
            action (str): `create`, `update` or `delete`.
            actor (Actor): Who made a write.
            changes (ListResponseAuditEventDataItemChanges): `{<field>: {before, after}}`; a secret field's value is
                `"[secret]"`.
            created_at (datetime.datetime):
            id (str): `aud_…`
            resource (Resource): What was written to.
     """

    action: str
    actor: Actor
    changes: ListResponseAuditEventDataItemChanges
    created_at: datetime.datetime
    id: str
    resource: Resource
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor # noqa: PLC0415
        from ..models.list_response_audit_event_data_item_changes import ListResponseAuditEventDataItemChanges # noqa: PLC0415
        from ..models.resource import Resource # noqa: PLC0415
        action = self.action

        actor = self.actor.to_dict()

        changes = self.changes.to_dict()

        created_at = self.created_at.isoformat()

        id = self.id

        resource = self.resource.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "action": action,
            "actor": actor,
            "changes": changes,
            "created_at": created_at,
            "id": id,
            "resource": resource,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor # noqa: PLC0415
        from ..models.list_response_audit_event_data_item_changes import ListResponseAuditEventDataItemChanges # noqa: PLC0415
        from ..models.resource import Resource # noqa: PLC0415
        d = dict(src_dict)
        action = d.pop("action")

        actor = Actor.from_dict(d.pop("actor"))




        changes = ListResponseAuditEventDataItemChanges.from_dict(d.pop("changes"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        resource = Resource.from_dict(d.pop("resource"))




        list_response_audit_event_data_item = cls(
            action=action,
            actor=actor,
            changes=changes,
            created_at=created_at,
            id=id,
            resource=resource,
        )


        list_response_audit_event_data_item.additional_properties = d
        return list_response_audit_event_data_item

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
