"""The invented names the demo dataset is built from. Any likeness to real firms is chance."""

from __future__ import annotations

from typing import NamedTuple


class CompanyRow(NamedTuple):
    name: str
    industry: str
    city: str
    founded: int
    aliases: tuple[str, ...] = ()


# country -> its cities
COUNTRIES: dict[str, tuple[str, ...]] = {
    "Valdoria": ("Port Aldmere", "Kestrel Bay", "Marrowgate", "Fenwick Harbor", "Calder Springs",
                 "Brightwell", "Saltmarsh", "Ravensford"),
    "Esterland": ("New Tamsin", "Eastmere", "Hollis Point", "Westbrook Falls", "Greystone",
                  "Ambervale", "Larkspur"),
    "Norrmark": ("Varnholm", "Lindqvist", "Oakhollow", "Dunmore", "Kingsreach", "Lowen",
                 "Thornbury"),
    "Calveria": ("San Aurelio", "Isola Verde", "Mirabel", "Redcliff", "Cobalt City", "Pinecrest",
                 "Silverlake", "Northfield"),
}  # fmt: skip

# industry -> product kinds its companies make
INDUSTRIES: dict[str, tuple[str, ...]] = {
    "Industrial Equipment": ("Hydraulic Press", "Torque Wrench Pro", "Conveyor X2", "Spot Welder"),
    "Logistics": ("RouteMaster", "Parcel Hub", "Cold Chain Tracker"),
    "Semiconductors": ("K7 Processor", "Edge NPU", "Lowpower MCU", "Photon Sensor"),
    "Food & Beverage": ("Sourdough Loaf", "Oat Drink", "Sparkling Tonic"),
    "Aerospace": ("Regional Jet R90", "Satellite Bus", "Turbofan T4"),
    "Software": ("Ledger Cloud", "Data Studio", "Fieldbook CRM", "Ops Console"),
    "Renewable Energy": ("Solar Panel S400", "Home Battery", "Wind Turbine W3"),
    "Biotech": ("Rapid Antigen Test", "Enzyme Kit", "Cell Culture Medium"),
    "Retail": ("Loyalty Card", "Store Brand Coffee", "Gift Box"),
    "Finance": ("Business Account", "Trade Credit Line", "Payment Terminal"),
}

COMPANIES: tuple[CompanyRow, ...] = (
    CompanyRow("Acme Corp", "Industrial Equipment", "Port Aldmere", 1948, ("ACME", "Acme Co")),
    CompanyRow("Acme Widgets Ltd", "Retail", "Lowen", 2011),
    CompanyRow("Brightline Logistics", "Logistics", "Kestrel Bay", 1994),
    CompanyRow("Corvid Semiconductors", "Semiconductors", "Varnholm", 1987, ("Corvid",)),
    CompanyRow("Dunmore Foods", "Food & Beverage", "Dunmore", 1921),
    CompanyRow("Eastwind Aerospace", "Aerospace", "Eastmere", 1962),
    CompanyRow("Fennel & Rye Bakeries", "Food & Beverage", "Ambervale", 2004),
    CompanyRow("Glasswing Software", "Software", "New Tamsin", 2009, ("Glasswing",)),
    CompanyRow("Halcyon Energy", "Renewable Energy", "San Aurelio", 2001),
    CompanyRow("Ironbark Materials", "Industrial Equipment", "Greystone", 1955),
    CompanyRow("Juniper Biotech", "Biotech", "Lindqvist", 1999),
    CompanyRow("Kettle Creek Outfitters", "Retail", "Pinecrest", 1978),
    CompanyRow("Lumen Grid", "Renewable Energy", "Brightwell", 2015),
    CompanyRow("Marlowe & Finch", "Finance", "Marrowgate", 1890, ("M&F",)),
    CompanyRow("Nimbus Freight", "Logistics", "Hollis Point", 1983),
    CompanyRow("Orchard Lane Grocers", "Retail", "Westbrook Falls", 1969),
    CompanyRow("Pellucid Optics", "Semiconductors", "Mirabel", 1991),
    CompanyRow("Quillon Robotics", "Industrial Equipment", "Kingsreach", 2012),
    CompanyRow("Riverbend Pharma", "Biotech", "Calder Springs", 1976),
    CompanyRow("Saltire Shipping", "Logistics", "Saltmarsh", 1902),
    CompanyRow("Tallowmere Mills", "Food & Beverage", "Thornbury", 1899),
    CompanyRow("Umber Analytics", "Software", "Larkspur", 2017),
    CompanyRow("Vantage Point Security", "Software", "Cobalt City", 2006),
    CompanyRow("Wrenfield Instruments", "Industrial Equipment", "Fenwick Harbor", 1972),
    CompanyRow("Xylo Audio", "Semiconductors", "Isola Verde", 2013),
    CompanyRow("Yarrow Health", "Biotech", "Oakhollow", 2008),
    CompanyRow("Zephyr Motors", "Aerospace", "Redcliff", 1958),
    CompanyRow("Bellwether Bank", "Finance", "Ravensford", 1911),
    CompanyRow("Cinder Forge Games", "Software", "Silverlake", 2014),
    CompanyRow("Driftwood Furniture", "Retail", "Kestrel Bay", 1985),
    CompanyRow("Ember Solar", "Renewable Energy", "Northfield", 2010),
    CompanyRow("Gantry Cranes Inc", "Industrial Equipment", "Saltmarsh", 1966),
    CompanyRow("Harbor Light Insurance", "Finance", "Fenwick Harbor", 1937),
    CompanyRow("Jetstream Airways", "Aerospace", "Westbrook Falls", 1979),
    CompanyRow("Lodestar Mining", "Industrial Equipment", "Varnholm", 1903),
    CompanyRow("Meridian Telecom", "Software", "Eastmere", 1989),
    CompanyRow("Northstar Semiconductor", "Semiconductors", "Lindqvist", 1998),
    CompanyRow("Oakhollow Dairy", "Food & Beverage", "Oakhollow", 1932),
    CompanyRow("Redcliff Brewing", "Food & Beverage", "Redcliff", 1874),
    CompanyRow("Sable Systems", "Software", "Port Aldmere", 2003),
    CompanyRow("Thornbury Textiles", "Retail", "Thornbury", 1911),
    CompanyRow("Upland Agritech", "Biotech", "Larkspur", 2016),
    CompanyRow("Verdant Water", "Renewable Energy", "Mirabel", 1997),
    CompanyRow("Willow & Oak Publishing", "Retail", "Ambervale", 1952),
    CompanyRow("Yellowfin Seafoods", "Food & Beverage", "Isola Verde", 1964),
)

FIRST_NAMES: tuple[str, ...] = (
    "Ada", "Bram", "Celia", "Dorian", "Edda", "Felix", "Greta", "Hugo", "Ines", "Jonas",
    "Katya", "Leon", "Mira", "Nils", "Odile", "Piet", "Quinn", "Rosa", "Soren", "Tilde",
    "Ulric", "Vera", "Wim", "Yara",
)  # fmt: skip

LAST_NAMES: tuple[str, ...] = (
    "Abernathy", "Blom", "Castellano", "Drummond", "Eklund", "Fairweather", "Gallo", "Hartigan",
    "Ivers", "Janssen", "Kowal", "Lindahl", "Moreau", "Navarro", "Okafor", "Petrov", "Quist",
    "Ramires", "Sandoval", "Thorne", "Ueda", "Valk", "Whitlock", "Yilmaz", "Zeller", "Brandt",
    "Coelho", "Devlin", "Ferrante", "Galloway",
)  # fmt: skip

ROLES: tuple[str, ...] = (
    "Chief Executive Officer", "Chief Financial Officer", "Head of Engineering",
    "Product Manager", "Sales Director", "Data Scientist", "Plant Manager", "Buyer",
    "Logistics Coordinator", "Research Scientist", "Designer", "Accountant",
)  # fmt: skip
