"""The columns of a FOCUS export that ``import focus`` reads, what each becomes, and where an
invoice line's run comes from (``--run-from``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contractlang.importers.focus import values as fv
from contractlang.importers.focus.parquet_table import Kind

#: The run of invoice lines that name none.
UNATTRIBUTED = "unattributed"

REQUIRED = ("BilledCost", "ChargeCategory", "ChargePeriodStart")
#: FOCUS columns kept as trace columns (when the export has them) → (column, type).
TEXT_KEPT = {
    "PricingUnit": "pricing_unit",
    "ConsumedUnit": "consumed_unit",
    "BillingCurrency": "billing_currency",
    "ResourceId": "resource_id",
    "SkuId": "sku_id",
    "ChargeDescription": "charge_description",
    "ServiceName": "service_name",
    "InvoiceId": "invoice_id",
    "CommitmentDiscountId": "commitment_discount_id",
    "ContractApplied": "contract_applied",
}
DECIMAL_KEPT = {
    "EffectiveCost": "effective_cost",
    "ListCost": "list_cost",
    "PricingQuantity": "pricing_quantity",
    "ConsumedQuantity": "consumed_quantity",
}
ENUM_KEPT = {
    "PricingCategory": ("pricing_category", fv.PRICING_CATEGORIES),
    "ChargeFrequency": ("charge_frequency", fv.CHARGE_FREQUENCIES),
    "CommitmentDiscountStatus": ("commitment_discount_status", fv.COMMITMENT_DISCOUNT_STATUSES),
}
#: Times kept beside ``ts`` (``ChargePeriodStart``), read as it is read.
TIME_KEPT = {
    "ChargePeriodEnd": "charge_period_end",
    "BillingPeriodStart": "billing_period_start",
    "BillingPeriodEnd": "billing_period_end",
}
#: The invoice event of each ChargeCategory: the category decides the kind, never the sign.
EVENTS = {
    "Usage": "charge",
    "Purchase": "charge",
    "Credit": "credit",
    "Adjustment": "adjustment",
    "Tax": "tax",
}
#: The categories whose negative lines are reversals: a negative charge (``reversal``), never
#: a credit.
REVERSIBLE = ("Usage", "Purchase")
#: Where ``provider`` comes from: FOCUS 1.3's ServiceProviderName, else the ProviderName it
#: replaces (a row where both have a value and they differ is noted, I046).
PROVIDERS = ("ServiceProviderName", "ProviderName")
PROVIDER = "provider"
OPTIONAL = (
    "ChargeClass",
    "Tags",
    *TEXT_KEPT,
    *DECIMAL_KEPT,
    *ENUM_KEPT,
    *TIME_KEPT,
    *PROVIDERS,
)

#: What each column holds, for a Parquet export's types
#: (:mod:`~contractlang.importers.focus.parquet_table`).
KINDS: dict[str, Kind] = {
    **dict.fromkeys((*REQUIRED, *OPTIONAL), "text"),
    **dict.fromkeys(("BilledCost", *DECIMAL_KEPT), "decimal"),
    **dict.fromkeys(("ChargePeriodStart", *TIME_KEPT), "time"),
    "Tags": "json",
    "ContractApplied": "json",
}


@dataclass(frozen=True)
class RunKey:
    """Where an invoice line's run comes from: a tag's value, or the ResourceId.

    >>> RunKey.parse("tag:training_run")
    RunKey(kind='tag', tag='training_run')
    >>> RunKey.parse("resource").describe()
    '`ResourceId`'
    """

    kind: Literal["tag", "resource"]
    tag: str | None = None

    @staticmethod
    def parse(text: str) -> RunKey | None:
        t = text.strip()
        if t == "resource":
            return RunKey("resource")
        if t.startswith("tag:") and t[4:].strip():
            return RunKey("tag", t[4:])
        return None

    def describe(self) -> str:
        return "`ResourceId`" if self.kind == "resource" else f"tag `{self.tag}`"
