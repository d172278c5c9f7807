""" Contains all the data models used in inputs/outputs """

from .actor import Actor
from .agent import Agent
from .agent_input import AgentInput
from .agent_patch import AgentPatch
from .api_key import ApiKey
from .api_key_input import ApiKeyInput
from .audit_event import AuditEvent
from .audit_event_changes import AuditEventChanges
from .auth_type import AuthType
from .authorization_params import AuthorizationParams
from .binding import Binding
from .binding_input import BindingInput
from .cache_mode import CacheMode
from .catch_up import CatchUp
from .connect_form import ConnectForm
from .connection import Connection
from .connection_input_type_0 import ConnectionInputType0
from .connection_input_type_0_type import ConnectionInputType0Type
from .connection_input_type_1 import ConnectionInputType1
from .connection_input_type_1_type import ConnectionInputType1Type
from .created_api_key import CreatedApiKey
from .delivery import Delivery
from .deployment import Deployment
from .deployment_input import DeploymentInput
from .deployment_patch import DeploymentPatch
from .endpoint_input import EndpointInput
from .endpoint_patch import EndpointPatch
from .endpoint_view import EndpointView
from .get_agent_mcp_resource_metadata_response_200 import GetAgentMcpResourceMetadataResponse200
from .get_openapi_document_response_200 import GetOpenapiDocumentResponse200
from .health import Health
from .import_openapi_tools_json_body import ImportOpenapiToolsJsonBody
from .imported_tools import ImportedTools
from .last_run import LastRun
from .list_response_agent import ListResponseAgent
from .list_response_agent_data_item import ListResponseAgentDataItem
from .list_response_api_key import ListResponseApiKey
from .list_response_api_key_data_item import ListResponseApiKeyDataItem
from .list_response_audit_event import ListResponseAuditEvent
from .list_response_audit_event_data_item import ListResponseAuditEventDataItem
from .list_response_audit_event_data_item_changes import ListResponseAuditEventDataItemChanges
from .list_response_connection import ListResponseConnection
from .list_response_connection_data_item import ListResponseConnectionDataItem
from .list_response_delivery import ListResponseDelivery
from .list_response_delivery_data_item import ListResponseDeliveryDataItem
from .list_response_deployment import ListResponseDeployment
from .list_response_deployment_data_item import ListResponseDeploymentDataItem
from .list_response_endpoint_view import ListResponseEndpointView
from .list_response_endpoint_view_data_item import ListResponseEndpointViewDataItem
from .list_response_org import ListResponseOrg
from .list_response_org_data_item import ListResponseOrgDataItem
from .list_response_provider import ListResponseProvider
from .list_response_provider_data_item import ListResponseProviderDataItem
from .list_response_schedule_view import ListResponseScheduleView
from .list_response_schedule_view_data_item import ListResponseScheduleViewDataItem
from .list_response_schedule_view_data_item_input import ListResponseScheduleViewDataItemInput
from .list_response_tool import ListResponseTool
from .list_response_tool_data_item import ListResponseToolDataItem
from .list_response_tool_data_item_input_schema import ListResponseToolDataItemInputSchema
from .list_response_workflow import ListResponseWorkflow
from .list_response_workflow_data_item import ListResponseWorkflowDataItem
from .list_response_workflow_data_item_steps_item import ListResponseWorkflowDataItemStepsItem
from .list_response_workflow_run import ListResponseWorkflowRun
from .list_response_workflow_run_data_item import ListResponseWorkflowRunDataItem
from .list_response_workflow_run_data_item_input import ListResponseWorkflowRunDataItemInput
from .list_response_workflow_run_data_item_steps import ListResponseWorkflowRunDataItemSteps
from .org import Org
from .org_input import OrgInput
from .overlap import Overlap
from .placed_tool import PlacedTool
from .placement_preview import PlacementPreview
from .post_agent_mcp_body import PostAgentMcpBody
from .post_agent_mcp_response_200 import PostAgentMcpResponse200
from .problem import Problem
from .provider import Provider
from .provider_auth import ProviderAuth
from .provider_input import ProviderInput
from .provider_patch import ProviderPatch
from .rate_limit import RateLimit
from .resource import Resource
from .rotated_secret import RotatedSecret
from .run_as import RunAs
from .run_input import RunInput
from .run_input_input_type_0 import RunInputInputType0
from .runtime_token import RuntimeToken
from .runtime_token_input import RuntimeTokenInput
from .runtime_token_input_credentials import RuntimeTokenInputCredentials
from .schedule_input import ScheduleInput
from .schedule_input_input_type_0 import ScheduleInputInputType0
from .schedule_patch import SchedulePatch
from .schedule_patch_input_type_0 import SchedulePatchInputType0
from .schedule_view import ScheduleView
from .schedule_view_input import ScheduleViewInput
from .scope import Scope
from .skipped import Skipped
from .step_view import StepView
from .sync_changes import SyncChanges
from .sync_report import SyncReport
from .token_auth_method import TokenAuthMethod
from .tool import Tool
from .tool_call_input import ToolCallInput
from .tool_call_input_arguments import ToolCallInputArguments
from .tool_call_input_arguments_filter_type_0_item import ToolCallInputArgumentsFilterType0Item
from .tool_call_input_arguments_filter_type_0_item_op import ToolCallInputArgumentsFilterType0ItemOp
from .tool_call_input_arguments_filter_type_1 import ToolCallInputArgumentsFilterType1
from .tool_call_input_arguments_filter_type_1_op import ToolCallInputArgumentsFilterType1Op
from .tool_call_input_arguments_for_each import ToolCallInputArgumentsForEach
from .tool_call_input_arguments_for_each_values_type_1 import ToolCallInputArgumentsForEachValuesType1
from .tool_call_input_arguments_for_each_values_type_1_filter import ToolCallInputArgumentsForEachValuesType1Filter
from .tool_call_input_arguments_for_each_values_type_1_filter_op import ToolCallInputArgumentsForEachValuesType1FilterOp
from .tool_call_record import ToolCallRecord
from .tool_call_record_error_type_0 import ToolCallRecordErrorType0
from .tool_call_response import ToolCallResponse
from .tool_input import ToolInput
from .tool_input_input_schema import ToolInputInputSchema
from .tool_input_schema import ToolInputSchema
from .tool_kind import ToolKind
from .tool_pagination import ToolPagination
from .tool_pagination_learned_type_0 import ToolPaginationLearnedType0
from .tool_pagination_parameters import ToolPaginationParameters
from .tool_patch import ToolPatch
from .tool_patch_input_schema_type_0 import ToolPatchInputSchemaType0
from .tool_view import ToolView
from .tool_view_input_schema import ToolViewInputSchema
from .workflow import Workflow
from .workflow_input import WorkflowInput
from .workflow_input_steps_item import WorkflowInputStepsItem
from .workflow_patch import WorkflowPatch
from .workflow_patch_steps_type_0_item import WorkflowPatchStepsType0Item
from .workflow_run import WorkflowRun
from .workflow_run_input import WorkflowRunInput
from .workflow_run_steps import WorkflowRunSteps
from .workflow_steps_item import WorkflowStepsItem

__all__ = (
    "Actor",
    "Agent",
    "AgentInput",
    "AgentPatch",
    "ApiKey",
    "ApiKeyInput",
    "AuditEvent",
    "AuditEventChanges",
    "AuthorizationParams",
    "AuthType",
    "Binding",
    "BindingInput",
    "CacheMode",
    "CatchUp",
    "ConnectForm",
    "Connection",
    "ConnectionInputType0",
    "ConnectionInputType0Type",
    "ConnectionInputType1",
    "ConnectionInputType1Type",
    "CreatedApiKey",
    "Delivery",
    "Deployment",
    "DeploymentInput",
    "DeploymentPatch",
    "EndpointInput",
    "EndpointPatch",
    "EndpointView",
    "GetAgentMcpResourceMetadataResponse200",
    "GetOpenapiDocumentResponse200",
    "Health",
    "ImportedTools",
    "ImportOpenapiToolsJsonBody",
    "LastRun",
    "ListResponseAgent",
    "ListResponseAgentDataItem",
    "ListResponseApiKey",
    "ListResponseApiKeyDataItem",
    "ListResponseAuditEvent",
    "ListResponseAuditEventDataItem",
    "ListResponseAuditEventDataItemChanges",
    "ListResponseConnection",
    "ListResponseConnectionDataItem",
    "ListResponseDelivery",
    "ListResponseDeliveryDataItem",
    "ListResponseDeployment",
    "ListResponseDeploymentDataItem",
    "ListResponseEndpointView",
    "ListResponseEndpointViewDataItem",
    "ListResponseOrg",
    "ListResponseOrgDataItem",
    "ListResponseProvider",
    "ListResponseProviderDataItem",
    "ListResponseScheduleView",
    "ListResponseScheduleViewDataItem",
    "ListResponseScheduleViewDataItemInput",
    "ListResponseTool",
    "ListResponseToolDataItem",
    "ListResponseToolDataItemInputSchema",
    "ListResponseWorkflow",
    "ListResponseWorkflowDataItem",
    "ListResponseWorkflowDataItemStepsItem",
    "ListResponseWorkflowRun",
    "ListResponseWorkflowRunDataItem",
    "ListResponseWorkflowRunDataItemInput",
    "ListResponseWorkflowRunDataItemSteps",
    "Org",
    "OrgInput",
    "Overlap",
    "PlacedTool",
    "PlacementPreview",
    "PostAgentMcpBody",
    "PostAgentMcpResponse200",
    "Problem",
    "Provider",
    "ProviderAuth",
    "ProviderInput",
    "ProviderPatch",
    "RateLimit",
    "Resource",
    "RotatedSecret",
    "RunAs",
    "RunInput",
    "RunInputInputType0",
    "RuntimeToken",
    "RuntimeTokenInput",
    "RuntimeTokenInputCredentials",
    "ScheduleInput",
    "ScheduleInputInputType0",
    "SchedulePatch",
    "SchedulePatchInputType0",
    "ScheduleView",
    "ScheduleViewInput",
    "Scope",
    "Skipped",
    "StepView",
    "SyncChanges",
    "SyncReport",
    "TokenAuthMethod",
    "Tool",
    "ToolCallInput",
    "ToolCallInputArguments",
    "ToolCallInputArgumentsFilterType0Item",
    "ToolCallInputArgumentsFilterType0ItemOp",
    "ToolCallInputArgumentsFilterType1",
    "ToolCallInputArgumentsFilterType1Op",
    "ToolCallInputArgumentsForEach",
    "ToolCallInputArgumentsForEachValuesType1",
    "ToolCallInputArgumentsForEachValuesType1Filter",
    "ToolCallInputArgumentsForEachValuesType1FilterOp",
    "ToolCallRecord",
    "ToolCallRecordErrorType0",
    "ToolCallResponse",
    "ToolInput",
    "ToolInputInputSchema",
    "ToolInputSchema",
    "ToolKind",
    "ToolPagination",
    "ToolPaginationLearnedType0",
    "ToolPaginationParameters",
    "ToolPatch",
    "ToolPatchInputSchemaType0",
    "ToolView",
    "ToolViewInputSchema",
    "Workflow",
    "WorkflowInput",
    "WorkflowInputStepsItem",
    "WorkflowPatch",
    "WorkflowPatchStepsType0Item",
    "WorkflowRun",
    "WorkflowRunInput",
    "WorkflowRunSteps",
    "WorkflowStepsItem",
)
