import Imago
import ImagoTestSupport
