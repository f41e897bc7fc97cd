import sys
from pathlib import Path

# tests import small helper modules that live beside them (catalogue_contract)
sys.path.insert(0, str(Path(__file__).parent))
