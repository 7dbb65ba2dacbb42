"""Vertex AI SKUs in the Cloud Billing Catalog API's JSON form, for the fake catalog server.

The JSON shape (``skuId``, ``description``, ``category.usageType``, ``serviceRegions``,
``pricingInfo[].effectiveTime`` and ``pricingExpression.usageUnit`` / ``tieredRates[].unitPrice``
as ``units`` (an int64 written as a string) + ``nanos``) is the one of the Catalog API reference
(cloud.google.com/billing/v1/how-tos/catalog-api and the ``services.skus.list`` reference, read
2026-12-06).

Real SKUs, as Google Cloud Japan's Zenn article "ハイエンド GPU が最大約半額に！DWS の新料金プランで GPU
コストを大幅削減" (2025; each SKU linked to cloud.google.com/skus?filter=<id>) lists them for a Vertex AI
custom-training job on a3-highgpu-8g in us-central1 (Iowa), with their unit prices:

- 3F95-001E-B747 "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa", 11.2660332 USD/h
- 2E83-99F1-391A "Vertex AI: Training/Pipelines on A3 Instance Core in Iowa", 0.0293227 USD/h per vCPU
- B045-9255-8314 "Vertex AI: Training/Pipelines on A3 Instance RAM in Iowa", 0.0025534 USD/h per GiB
- 5853-505F-A5C4 "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB in Iowa", 1.4694826 USD/h
- A005-98FE-36CC "Vertex AI: Training/Pipelines on SSD backed PD Capacity" (per GiB-month)
- AE9C-DB60-DF46 "Vertex AI: Online/Batch Prediction Nvidia H100 80gb GPU running in Iowa"

The N1 descriptions ("Vertex AI: Training/Pipelines on N1 Predefined Instance Core running in
Americas", "... Ram running in Americas") are those a public price-check script matches in the
catalog (index file 69083071661 of the search corpus: scripts/price_check.py, "vertex-training-
n1-standard-4", 2026). Their SKU ids and prices here are made for the test (``TEST-...`` ids):
Compute Engine's N1 rates (0.031611 USD per vCPU-hour, 0.004237 per GB-hour) x 1.15, Vertex AI
training's share, which gives n1-standard-4 the 0.2185 USD/h the Vertex AI pricing page lists for
us-central1. The T4, spot and TPU SKUs follow the H100 SKU's description shape, with test ids and
the list prices of the Vertex AI and Cloud TPU pricing pages (T4 0.4025 USD/h; TPU v5e 1.20 USD per
chip-hour; read 2026-12-06); the spot T4's price is made up for the test.
"""

from __future__ import annotations

from typing import Any

#: Every SKU below takes effect on this day (UTC).
EFFECTIVE = "2026-11-01T08:00:00.000Z"


def sku(
    sku_id: str,
    description: str,
    units: int,
    nanos: int,
    *,
    unit: str = "h",
    regions: tuple[str, ...] = ("us-central1",),
    usage: str = "OnDemand",
    effective: str = EFFECTIVE,
    family: str = "Compute",
) -> dict[str, Any]:
    """One SKU in the API's JSON form, one tier priced ``units`` + ``nanos`` / 1e9 USD per ``unit``."""
    return {
        "name": f"services/C7E2-9256-1C43/skus/{sku_id}",
        "skuId": sku_id,
        "description": description,
        "category": {
            "serviceDisplayName": "Vertex AI",
            "resourceFamily": family,
            "resourceGroup": "Training",
            "usageType": usage,
        },
        "serviceRegions": list(regions),
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    "usageUnit": unit,
                    "displayQuantity": 1,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {"currencyCode": "USD", "units": str(units), "nanos": nanos},
                        }
                    ],
                    "usageUnitDescription": unit,
                    "baseUnit": "s",
                    "baseUnitDescription": "second",
                    "baseUnitConversionFactor": 3600,
                },
                "currencyConversionRate": 1,
                "effectiveTime": effective,
            }
        ],
        "serviceProviderName": "Google",
    }


VERTEX_SKUS: list[dict[str, Any]] = [
    sku("3F95-001E-B747", "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa", 11, 266033200),
    sku("2E83-99F1-391A", "Vertex AI: Training/Pipelines on A3 Instance Core in Iowa", 0, 29322700),
    sku("B045-9255-8314", "Vertex AI: Training/Pipelines on A3 Instance RAM in Iowa", 0, 2553400, unit="GiBy.h"),
    sku("5853-505F-A5C4", "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB in Iowa", 1, 469482600),
    sku("A005-98FE-36CC", "Vertex AI: Training/Pipelines on SSD backed PD Capacity", 0, 195500000, unit="GiBy.mo",
        family="Storage"),
    sku("AE9C-DB60-DF46", "Vertex AI: Online/Batch Prediction Nvidia H100 80gb GPU running in Iowa", 11, 266033200),
    sku("TEST-N1-CORE", "Vertex AI: Training/Pipelines on N1 Predefined Instance Core running in Americas", 0, 36352650,
        regions=("us-central1", "us-east1")),
    sku("TEST-N1-RAM", "Vertex AI: Training/Pipelines on N1 Predefined Instance Ram running in Americas", 0, 4872550,
        unit="GiBy.h", regions=("us-central1", "us-east1")),
    sku("TEST-T4", "Vertex AI: Training/Pipelines on Nvidia Tesla T4 GPU running in Americas", 0, 402500000,
        regions=("us-central1", "us-east1")),
    sku("TEST-T4-SPOT", "Vertex AI: Training/Pipelines on Nvidia Tesla T4 GPU running in Americas", 0, 161000000,
        usage="Preemptible"),
    sku("TEST-V5E", "Vertex AI: Training/Pipelines on TPU v5e in Iowa", 1, 200000000),
    sku("TEST-T4-1Y", "Vertex AI: Training/Pipelines on Nvidia Tesla T4 GPU running in Americas", 0, 250000000,
        usage="Commit1Yr"),
]  # fmt: skip
