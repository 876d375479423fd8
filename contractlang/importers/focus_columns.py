"""The columns of a FOCUS export that ``import focus`` reads, what each becomes, and where an
invoice line's run comes from (``--run-from``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contractlang.importers import focus_values as fv

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
    "ProviderName": "provider",
    "ServiceName": "service_name",
    "InvoiceId": "invoice_id",
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
}
OPTIONAL = ("ChargeClass", "ChargePeriodEnd", "Tags", *TEXT_KEPT, *DECIMAL_KEPT, *ENUM_KEPT)


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
